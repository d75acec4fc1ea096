#pragma once
// Placement: which tile holds each element range of a value, and helpers to
// build and compare placements. A placement covers [0, numElements) in order.
#include <cstdint>
#include <vector>

namespace ipusim::scheduler {

struct PlacedRange {
  std::uint64_t begin = 0, end = 0;
  std::uint32_t tile = 0;
  bool operator==(const PlacedRange& o) const { return begin == o.begin && end == o.end && tile == o.tile; }
};
using Placement = std::vector<PlacedRange>;

// Sorts by begin and merges neighbours on the same tile.
Placement normalized(Placement p);
// Everything on one tile.
Placement onTile(std::uint64_t elements, std::uint32_t tile);
// Even split of [0, n) into `parts` ranges (the first ones one longer).
std::vector<std::pair<std::uint64_t, std::uint64_t>> evenSplit(std::uint64_t n, std::uint64_t parts);
// Splits [begin, end) into at most `parts` chunks of at least `grain` elements.
std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks(std::uint64_t begin, std::uint64_t end,
                                                            std::uint64_t parts, std::uint64_t grain);

}  // namespace ipusim::scheduler
