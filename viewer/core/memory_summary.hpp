#pragma once
// MemorySummary: tile memory per tile, for the memory view's bar chart and
// its tile-map heat map. A tile's total is its peak (tile_memory_peak: the
// compiler's figure, the one `ipusim report` prints); profiles without peaks
// fall back to the sum of the tile's tile_memory rows. The bar is stacked by
// category (tile_memory) in proportion: not-always-live tensors share bytes,
// so the categories can add up to more than the peak, and each is then scaled
// by peak / (sum of categories) so the stack is exactly the peak.
#include "traces/profile_rows.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::viewer {

struct MemorySummary {
  std::vector<std::string> categories;                // stacking order
  std::vector<std::vector<std::int64_t>> bytes;       // [tile][category], scaled to the peak
  std::vector<std::int64_t> total;                    // [tile]: the peak
  std::vector<std::int64_t> categoryBytes;            // [category]: unscaled sum over tiles (the legend)
  bool fromPeaks = false;                             // false: an older profile, totals are category sums
  std::int64_t capacity = 0;                          // bytes per tile, 0 if unknown
  std::int64_t maxTotal = 0;
  std::int64_t tilesOverCapacity = 0;
  std::size_t tileCount() const { return total.size(); }
};

// `tiles`: tiles in the profile (meta num_ipus x tiles_per_ipu), so tiles
// without rows still show; `capacity`: bytes per tile.
MemorySummary summarizeMemory(const std::vector<traces::TileMemoryRow>& rows,
                              const std::vector<traces::TileMemoryPeakRow>& peaks, std::int64_t tiles,
                              std::int64_t capacity);

}  // namespace ipusim::viewer
