#include "viewer/core/level_of_detail.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::viewer {

void foldRow(const SliceColumns& row, const TimeAxis& axis, const FoldOptions& options,
             std::vector<DrawBlock>& out) {
  const double cpp = axis.cyclesPerPixel();
  const auto viewStart = static_cast<std::int64_t>(std::floor(axis.startCycle()));
  const auto viewEnd = static_cast<std::int64_t>(std::ceil(axis.endCycle()));
  // In cycles; at least 1 so that a fold always makes progress.
  const auto minWidth = std::max<std::int64_t>(1, static_cast<std::int64_t>(options.minWidthPx * cpp));
  const auto maxGap = static_cast<std::int64_t>(options.maxGapPx * cpp);
  const auto maxFold = std::max(minWidth, static_cast<std::int64_t>(options.maxFoldPx * cpp));

  const std::size_t n = row.size();
  std::size_t i = row.firstEndingAfter(viewStart);
  // A zero-length slice exactly at viewStart is visible too.
  while (i > 0 && row.end[i - 1] == viewStart && row.start[i - 1] == viewStart) --i;

  while (i < n && row.start[i] <= viewEnd) {
    const std::int64_t width = row.end[i] - row.start[i];
    if (width >= minWidth) {
      out.push_back({row.start[i], row.end[i], i, 1});
      ++i;
      continue;
    }
    // Fold: swallow every slice starting within minWidth of the fold's last
    // end, as long as the next one is narrow and the gap before it is small.
    const std::size_t first = i;
    std::size_t last = i;  // inclusive
    for (;;) {
      if (row.end[last] - row.start[first] >= maxFold) break;
      const std::int64_t reach = row.end[last] + minWidth;
      std::size_t next = row.firstStartingAtOrAfter(reach, last + 1);
      // Slices in (last, next) start before `reach`: take all but a wide last one.
      if (next > last + 1) {
        std::size_t take = next - 1;
        if (row.end[take] - row.start[take] >= minWidth) --take;
        if (take > last) {
          last = take;
          continue;
        }
      }
      // Nothing more within reach: look at the slice right after.
      if (last + 1 >= n) break;
      const std::size_t candidate = last + 1;
      const bool narrow = row.end[candidate] - row.start[candidate] < minWidth;
      const bool close = row.start[candidate] - row.end[last] <= maxGap;
      if (!narrow || !close || row.start[candidate] > viewEnd) break;
      last = candidate;
    }
    out.push_back({row.start[first], row.end[last], first, last - first + 1});
    i = last + 1;
  }
}

std::uint8_t foldCategory(const SliceColumns& row, const DrawBlock& block, std::size_t maxSamples) {
  if (block.count <= 1 || maxSamples == 0) return row.category[block.first];
  std::int64_t cycles[256] = {};
  std::uint8_t order[256];
  std::size_t seen = 0;
  const std::size_t samples = std::min(block.count, maxSamples);
  for (std::size_t k = 0; k < samples; ++k) {
    // Evenly spaced over the block, first and last included.
    const std::size_t i = block.first + (samples == 1 ? 0 : k * (block.count - 1) / (samples - 1));
    const std::uint8_t c = row.category[i];
    if (cycles[c] == 0) order[seen++] = c;
    cycles[c] += std::max<std::int64_t>(1, row.end[i] - row.start[i]);
  }
  std::uint8_t best = order[0];
  for (std::size_t k = 1; k < seen; ++k)
    if (cycles[order[k]] > cycles[best]) best = order[k];
  return best;
}

}  // namespace ipusim::viewer
