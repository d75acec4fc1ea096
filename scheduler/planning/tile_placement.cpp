#include "scheduler/planning/tile_placement.hpp"

#include <algorithm>

namespace ipusim::scheduler {

Placement normalized(Placement p) {
  std::sort(p.begin(), p.end(), [](const PlacedRange& a, const PlacedRange& b) { return a.begin < b.begin; });
  Placement out;
  for (const PlacedRange& r : p) {
    if (r.begin == r.end) continue;
    if (!out.empty() && out.back().end == r.begin && out.back().tile == r.tile) out.back().end = r.end;
    else out.push_back(r);
  }
  return out;
}

Placement onTile(std::uint64_t elements, std::uint32_t tile) { return {{0, elements, tile}}; }

std::vector<std::pair<std::uint64_t, std::uint64_t>> evenSplit(std::uint64_t n, std::uint64_t parts) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> r;
  parts = std::max<std::uint64_t>(1, std::min(parts, n));
  std::uint64_t begin = 0;
  for (std::uint64_t i = 0; i < parts; ++i) {
    const std::uint64_t len = n / parts + (i < n % parts ? 1 : 0);
    r.push_back({begin, begin + len});
    begin += len;
  }
  return r;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks(std::uint64_t begin, std::uint64_t end,
                                                            std::uint64_t parts, std::uint64_t grain) {
  const std::uint64_t n = end - begin;
  const std::uint64_t maxParts = std::max<std::uint64_t>(1, n / std::max<std::uint64_t>(1, grain));
  auto r = evenSplit(n, std::min(parts, maxParts));
  for (auto& [b, e] : r) b += begin, e += begin;
  return r;
}

}  // namespace ipusim::scheduler
