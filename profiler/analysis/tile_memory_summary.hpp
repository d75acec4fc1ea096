#pragma once
// TileMemorySummary: tile memory use from the tile_memory table against the
// per-tile capacity (meta tile_memory_bytes).
#include "traces/profile_rows.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

struct TileUse {
  std::int64_t ipu = 0;
  std::int64_t tile = 0;   // global tile index
  std::int64_t bytes = 0;  // all categories
};

struct TileMemorySummary {
  std::int64_t tiles = 0;            // tiles the mean is taken over
  std::int64_t capacityBytes = 0;    // per tile, 0 = unknown
  std::int64_t totalBytes = 0;
  std::int64_t maxBytes = 0;
  double meanBytes = 0;
  std::int64_t tilesOverCapacity = 0;
  std::map<std::string, std::int64_t> bytesByCategory;
  std::vector<TileUse> fullest;      // most used first; ties by tile index
};

// `targetTiles` is the number of tiles of the target (IPUs x tiles per IPU;
// tiles without rows use 0 bytes), or 0 to take the mean over the tiles that
// have rows. `top` is how many of the fullest tiles to keep.
TileMemorySummary summarizeTileMemory(const std::vector<traces::TileMemoryRow>& rows,
                                      std::int64_t targetTiles, std::int64_t capacityBytes,
                                      std::size_t top);

}  // namespace ipusim::profiler::analysis
