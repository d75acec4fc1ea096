#pragma once
// MemorySummary: the tile_memory table per tile, for the memory view's bar
// chart (bytes per tile, stacked by category, against the tile capacity) and
// its tile-map heat map.
#include "traces/profile_rows.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::viewer {

struct MemorySummary {
  std::vector<std::string> categories;                // stacking order
  std::vector<std::vector<std::int64_t>> bytes;       // [tile][category]
  std::vector<std::int64_t> total;                    // [tile]
  std::int64_t capacity = 0;                          // bytes per tile, 0 if unknown
  std::int64_t maxTotal = 0;
  std::int64_t tilesOverCapacity = 0;
  std::size_t tileCount() const { return total.size(); }
};

// `tiles`: tiles in the profile (meta num_ipus x tiles_per_ipu), so tiles
// without rows still show; `capacity`: bytes per tile.
MemorySummary summarizeMemory(const std::vector<traces::TileMemoryRow>& rows, std::int64_t tiles,
                              std::int64_t capacity);

}  // namespace ipusim::viewer
