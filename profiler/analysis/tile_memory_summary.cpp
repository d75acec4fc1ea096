#include "profiler/analysis/tile_memory_summary.hpp"

#include <algorithm>

namespace ipusim::profiler::analysis {

TileMemorySummary summarizeTileMemory(const std::vector<traces::TileMemoryRow>& rows,
                                      const std::vector<traces::TileMemoryPeakRow>& peaks,
                                      std::int64_t targetTiles, std::int64_t capacityBytes,
                                      std::size_t top) {
  TileMemorySummary s;
  s.capacityBytes = capacityBytes;
  std::map<std::int64_t, TileUse> byTile;
  s.fromPeaks = !peaks.empty() || rows.empty();
  for (const auto& row : rows) {
    s.bytesByCategory[row.category] += row.bytes;
    if (s.fromPeaks) continue;
    TileUse& use = byTile[row.tile];
    use.ipu = row.ipu;
    use.tile = row.tile;
    use.bytes += row.bytes;
    if (row.alwaysLive) use.alwaysLiveBytes += row.bytes;
    else use.notAlwaysLivePeakBytes += row.bytes;
  }
  for (const auto& peak : peaks)
    byTile[peak.tile] = TileUse{peak.ipu, peak.tile, peak.peakBytes, peak.alwaysLiveBytes, peak.notAlwaysLivePeakBytes};
  for (const auto& [index, use] : byTile) s.totalBytes += use.bytes;
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
