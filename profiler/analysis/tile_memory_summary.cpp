#include "profiler/analysis/tile_memory_summary.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ipusim::profiler::analysis {
namespace {

// The reader bounds each row; a damaged file of many huge rows could still
// overflow a sum, which is an error rather than a wrapped figure.
void add(std::int64_t& sum, std::int64_t bytes, std::int64_t tile) {
  if (__builtin_add_overflow(sum, bytes, &sum))
    throw std::overflow_error("tile_memory: the bytes of tile " + std::to_string(tile) +
                              " sum beyond 64 bits: the profile is damaged");
}

}  // namespace

TileMemorySummary summarizeTileMemory(const std::vector<traces::TileMemoryRow>& rows,
                                      const std::vector<traces::TileMemoryPeakRow>& peaks,
                                      std::int64_t targetTiles, std::int64_t capacityBytes,
                                      std::size_t top) {
  TileMemorySummary s;
  s.capacityBytes = capacityBytes;
  std::map<std::int64_t, TileUse> byTile;
  s.fromPeaks = !peaks.empty() || rows.empty();
  for (const auto& row : rows) {
    add(s.bytesByCategory[row.category], row.bytes, row.tile);
    if (s.fromPeaks) continue;
    TileUse& use = byTile[row.tile];
    use.ipu = row.ipu;
    use.tile = row.tile;
    add(use.bytes, row.bytes, row.tile);
    add(row.alwaysLive ? use.alwaysLiveBytes : use.notAlwaysLivePeakBytes, row.bytes, row.tile);
  }
  for (const auto& peak : peaks)
    byTile[peak.tile] = TileUse{peak.ipu, peak.tile, peak.peakBytes, peak.alwaysLiveBytes, peak.notAlwaysLivePeakBytes};
  for (const auto& [index, use] : byTile) add(s.totalBytes, use.bytes, index);
  std::vector<TileUse> tiles;
  tiles.reserve(byTile.size());
  std::map<std::int64_t, IpuMemoryUse> byIpu;
  for (const auto& [index, use] : byTile) {
    tiles.push_back(use);
    IpuMemoryUse& ipu = byIpu[use.ipu];
    ipu.ipu = use.ipu;
    ipu.maxBytes = std::max(ipu.maxBytes, use.bytes);
    ipu.maxNotAlwaysLivePeakBytes = std::max(ipu.maxNotAlwaysLivePeakBytes, use.notAlwaysLivePeakBytes);
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
  std::map<std::int64_t, TileUse*> kept;
  for (TileUse& use : s.fullest) kept[use.tile] = &use;
  for (const auto& row : rows)
    if (row.category == "optimizer" && row.alwaysLive)
      if (const auto at = kept.find(row.tile); at != kept.end()) add(at->second->optimizerStateBytes, row.bytes, row.tile);
  for (const auto& [ipu, use] : byIpu) s.perIpu.push_back(use);
  return s;
}

}  // namespace ipusim::profiler::analysis
