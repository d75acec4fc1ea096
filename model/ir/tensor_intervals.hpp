#pragma once
// The mapping intervals holding a range of a tensor's elements.
#include "model/ir/tensor.hpp"

#include <algorithm>
#include <cstdint>

namespace ipusim::ir {

// Calls visit(interval, lo, hi) for each mapping interval of `t` holding
// part of elements [begin, end), in element order; [lo, hi) is that part.
// The mapping must be sorted and without overlaps (Executable::validate
// checks it): a binary search finds the first interval, so a slice of a
// tensor spread over every tile costs its own intervals, not the tensor's.
template <typename Visit>
void forEachIntervalOf(const Tensor& t, std::uint64_t begin, std::uint64_t end, Visit&& visit) {
  auto it = std::upper_bound(t.mapping.begin(), t.mapping.end(), begin,
                             [](std::uint64_t b, const TileInterval& iv) { return b < iv.end; });
  for (; it != t.mapping.end() && it->begin < end; ++it) {
    const std::uint64_t lo = std::max(it->begin, begin), hi = std::min(it->end, end);
    if (lo < hi) visit(*it, lo, hi);
  }
}

}  // namespace ipusim::ir
