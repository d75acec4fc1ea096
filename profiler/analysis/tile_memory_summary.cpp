#include "profiler/analysis/tile_memory_summary.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ipusim::profiler::analysis {

TileMemorySummary summarizeTileMemory(const std::vector<traces::TileMemoryRow>& rows,
                                      std::int64_t targetTiles, std::int64_t capacityBytes,
                                      std::size_t top) {
  TileMemorySummary s;
  s.capacityBytes = capacityBytes;
  std::map<std::int64_t, TileUse> byTile;
  for (const auto& row : rows) {
    TileUse& use = byTile[row.tile];
    use.ipu = row.ipu;
    use.tile = row.tile;
    // The reader bounds each row; a file of many huge rows could still overflow a sum.
    std::int64_t& category = s.bytesByCategory[row.category];
    if (__builtin_add_overflow(use.bytes, row.bytes, &use.bytes) ||
        __builtin_add_overflow(category, row.bytes, &category) ||
        __builtin_add_overflow(s.totalBytes, row.bytes, &s.totalBytes))
      throw std::overflow_error("tile_memory: the bytes of tile " + std::to_string(row.tile) +
                                " sum beyond 64 bits: the profile is damaged");
  }
  std::vector<TileUse> tiles;
  tiles.reserve(byTile.size());
  for (const auto& [index, use] : byTile) {
    tiles.push_back(use);
    s.maxBytes = std::max(s.maxBytes, use.bytes);
    if (capacityBytes > 0 && use.bytes > capacityBytes) ++s.tilesOverCapacity;
  }
  s.tiles = std::max<std::int64_t>(targetTiles, static_cast<std::int64_t>(tiles.size()));
  s.meanBytes = s.tiles > 0 ? double(s.totalBytes) / double(s.tiles) : 0.0;
  const std::size_t keep = std::min(top, tiles.size());
  std::partial_sort(tiles.begin(), tiles.begin() + static_cast<std::ptrdiff_t>(keep), tiles.end(),
                    [](const TileUse& a, const TileUse& b) {
                      return a.bytes != b.bytes ? a.bytes > b.bytes : a.tile < b.tile;
                    });
  s.fullest.assign(tiles.begin(), tiles.begin() + static_cast<std::ptrdiff_t>(keep));
  return s;
}

}  // namespace ipusim::profiler::analysis
