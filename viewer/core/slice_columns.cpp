#include "viewer/core/slice_columns.hpp"

#include <algorithm>

namespace ipusim::viewer {

std::uint32_t StringTable::intern(const std::string& text) {
  auto it = index_.find(text);
  if (it != index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(strings_.size());
  strings_.push_back(text);
  index_.emplace(text, id);
  return id;
}

void SliceColumns::reserve(std::size_t n, bool withPhases) {
  start.reserve(n);
  end.reserve(n);
  sliceId.reserve(n);
  name.reserve(n);
  category.reserve(n);
  programId.reserve(n);
  if (withPhases) phaseId.reserve(n);
}

void SliceColumns::push(std::int64_t s, std::int64_t e, std::int64_t id, std::uint32_t n,
                        std::uint8_t c, std::int32_t program) {
  start.push_back(s);
  end.push_back(e);
  sliceId.push_back(id);
  name.push_back(n);
  category.push_back(c);
  programId.push_back(program);
}

std::size_t SliceColumns::firstEndingAfter(std::int64_t cycle) const {
  // Rows do not overlap, so `end` is sorted like `start`.
  return static_cast<std::size_t>(std::upper_bound(end.begin(), end.end(), cycle) - end.begin());
}

std::size_t SliceColumns::firstStartingAtOrAfter(std::int64_t cycle, std::size_t from) const {
  from = std::min(from, start.size());
  return static_cast<std::size_t>(
      std::lower_bound(start.begin() + static_cast<std::ptrdiff_t>(from), start.end(), cycle) -
      start.begin());
}

}  // namespace ipusim::viewer
