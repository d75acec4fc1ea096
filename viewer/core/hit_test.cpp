#include "viewer/core/hit_test.hpp"

#include <algorithm>

namespace ipusim::viewer {

std::optional<std::size_t> sliceAt(const SliceColumns& row, std::int64_t cycle) {
  // Last slice starting at or before `cycle`.
  auto it = std::upper_bound(row.start.begin(), row.start.end(), cycle);
  if (it == row.start.begin()) return std::nullopt;
  const auto i = static_cast<std::size_t>(it - row.start.begin()) - 1;
  const bool inside = cycle < row.end[i] || (row.start[i] == row.end[i] && cycle == row.start[i]);
  if (inside) return i;
  return std::nullopt;
}

std::optional<std::size_t> sliceNear(const SliceColumns& row, std::int64_t cycle,
                                     std::int64_t toleranceCycles) {
  if (auto exact = sliceAt(row, cycle)) return exact;
  if (row.empty()) return std::nullopt;
  const std::size_t after = row.firstStartingAtOrAfter(cycle);
  std::optional<std::size_t> best;
  std::int64_t bestDistance = toleranceCycles + 1;
  if (after < row.size() && row.start[after] - cycle < bestDistance) {
    best = after;
    bestDistance = row.start[after] - cycle;
  }
  if (after > 0 && cycle - row.end[after - 1] < bestDistance) best = after - 1;
  return best;
}

std::optional<std::size_t> blockAt(const std::vector<DrawBlock>& blocks, const TimeAxis& axis,
                                   double px, double tolerancePx) {
  std::optional<std::size_t> best;
  double bestDistance = tolerancePx;
  // Blocks are ordered; binary search the first one ending right of px - tolerance.
  const double from = axis.cycleAt(px - tolerancePx);
  auto it = std::lower_bound(blocks.begin(), blocks.end(), from,
                             [](const DrawBlock& b, double c) { return double(b.end) < c; });
  for (; it != blocks.end(); ++it) {
    const double left = axis.pixelOf(double(it->start));
    const double right = std::max(left + 1.0, axis.pixelOf(double(it->end)));
    if (left > px + tolerancePx) break;
    if (px >= left && px < right) return static_cast<std::size_t>(it - blocks.begin());
    const double distance = px < left ? left - px : px - right;
    if (distance <= bestDistance) {
      bestDistance = distance;
      best = static_cast<std::size_t>(it - blocks.begin());
    }
  }
  return best;
}

}  // namespace ipusim::viewer
