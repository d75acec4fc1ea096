#pragma once
// TileMemorySummary: tile memory use against the per-tile capacity (meta
// tile_memory_bytes). A tile's figure is its peak (tile_memory_peak: the
// highest byte of the placed addresses, where not-always-live tensors share
// bytes), the same figure the compiler checks. Profiles without
// tile_memory_peak rows (older writers) fall back to the sum of the tile's
// tile_memory rows. bytesByCategory is the breakdown of what lives on the
// tiles (tile_memory), which may exceed the peaks' total.
#include "traces/profile_rows.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

struct TileUse {
  std::int64_t ipu = 0;
  std::int64_t tile = 0;   // global tile index
  std::int64_t bytes = 0;  // the tile's peak
  std::int64_t alwaysLiveBytes = 0;
  std::int64_t notAlwaysLivePeakBytes = 0;
  // Of the always-live bytes, the optimizer's (category "optimizer": its
  // slot variables, step count and per-tile scalars); filled for `fullest`.
  std::int64_t optimizerStateBytes = 0;
};

// Per IPU: its fullest tile's peak and the highest not-always-live peak of its
// tiles (the bytes where activations, gradients and temporaries live, shared
// by liveness: what a pipeline schedule's mini-batches in flight need).
struct IpuMemoryUse {
  std::int64_t ipu = 0;
  std::int64_t maxBytes = 0;
  std::int64_t maxNotAlwaysLivePeakBytes = 0;
};

struct TileMemorySummary {
  std::int64_t tiles = 0;            // tiles the mean is taken over
  std::int64_t capacityBytes = 0;    // per tile, 0 = unknown
  std::int64_t totalBytes = 0;      // sum of the tiles' peaks
  bool fromPeaks = true;             // false: an older profile, figures are category sums
  std::int64_t maxBytes = 0;
  double meanBytes = 0;
  std::int64_t tilesOverCapacity = 0;
  std::map<std::string, std::int64_t> bytesByCategory;
  std::vector<TileUse> fullest;      // most used first; ties by tile index
  std::vector<IpuMemoryUse> perIpu;  // by IPU, the IPUs with rows
};

// `targetTiles` is the number of tiles of the target (IPUs x tiles per IPU;
// tiles without rows use 0 bytes), or 0 to take the mean over the tiles that
// have rows. `top` is how many of the fullest tiles to keep.
TileMemorySummary summarizeTileMemory(const std::vector<traces::TileMemoryRow>& rows,
                                      const std::vector<traces::TileMemoryPeakRow>& peaks,
                                      std::int64_t targetTiles, std::int64_t capacityBytes,
                                      std::size_t top);

}  // namespace ipusim::profiler::analysis
