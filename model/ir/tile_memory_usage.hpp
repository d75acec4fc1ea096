#pragma once
// Tile memory usage: THE per-tile memory figure (what the compiler checks
// against tile.memoryBytes, what the profile's tile_memory rows and `ipusim
// report` and the viewer show), and Poplar's out-of-memory summary built from it.
//
// Contract of tileMemoryUsage(tensors, numTiles):
// - Input: tensors whose every mapping interval has an address (a memory plan
//   or load placement ran); an unplaced interval is a std::invalid_argument
//   naming the tensor. Intervals on tiles >= numTiles are an error too.
// - peakBytes: per tile, the highest byte any interval uses, rounded up to
//   kTileMemoryAlignment (the planners' alignment): the bytes that must fit
//   in tile memory. Not-always-live tensors may share addresses, so this is
//   what the tile really needs, not the sum of its tensors.
// - alwaysLiveBytes: the sum over always-live tensors of their bytes on the
//   tile, each rounded up to kTileMemoryAlignment (as a bump allocator lays
//   them out), capped at peakBytes; notAlwaysLivePeakBytes = peakBytes -
//   alwaysLiveBytes: the rest of the peak, where not-always-live tensors
//   (and any alignment gaps) live.
// - categories: per category, the sum of its tensors' bytes on the tile
//   (unaligned), split into always-live and not-always-live. These add up to
//   MORE than peakBytes when not-always-live tensors share bytes: they are a
//   breakdown of what lives on the tile, not of the peak.
// - largest: the tile's `largestPerTile` biggest tensors by bytes on the
//   tile (ties by tensor id), largest first.
// - Only tiles holding at least one byte are listed, in tile order.
#include "model/ir/tensor.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::ir {

inline constexpr std::uint64_t kTileMemoryAlignment = 8;  // tile memory is accessed in 64-bit words
inline constexpr std::uint64_t alignToTileMemory(std::uint64_t bytes) {
  return (bytes + kTileMemoryAlignment - 1) / kTileMemoryAlignment * kTileMemoryAlignment;
}

// The load's rule for what the memory plan left unplaced (the model's
// LoadedExecutable, and the compiler for buffers it adds after the plan):
// each of `mapping`'s unplaced intervals at the next aligned byte above what
// its tile holds, `top` (bytes per tile) raised past it. (A tile beyond
// `top` throws std::out_of_range: the caller's mapping is not yet validated.)
inline void placeAboveTop(std::vector<TileInterval>& mapping, DType dtype, std::vector<std::uint64_t>& top) {
  for (TileInterval& iv : mapping) {
    if (iv.address != TileInterval::kUnplaced) continue;
    iv.address = alignToTileMemory(top.at(iv.tile));
    top[iv.tile] = iv.address + (iv.end - iv.begin) * sizeOf(dtype);
  }
}

// A tensor's name as an out-of-memory summary shows it: at most
// kMaxNameInSummary characters, then "...", so that the summary (and each
// tile's list) stays small whatever the name's length.
inline constexpr std::size_t kMaxNameInSummary = 200;
std::string nameForSummary(const std::string& name);

struct TensorOnTile {
  Id tensor = kNoId;
  std::string name;  // as messages show it: at most 200 characters, then "..."
  std::string category;
  bool alwaysLive = true;
  std::uint64_t bytes = 0;  // of this tensor on this tile
};

struct CategoryBytes {
  std::string category;
  bool alwaysLive = true;
  std::uint64_t bytes = 0;
};

struct TileMemoryUsage {
  std::uint32_t tile = 0;
  std::uint64_t peakBytes = 0;
  std::uint64_t alwaysLiveBytes = 0;
  std::uint64_t notAlwaysLivePeakBytes = 0;
  std::vector<CategoryBytes> categories;  // sorted by (category, alwaysLive)
  std::vector<TensorOnTile> largest;
};

// `largestPerTile` 0 leaves `largest` empty: the figures alone, for callers that name tensors only when a
// tile is over capacity (a POD256 of the tutorial has 376,832 tiles: their lists took 260 MB of a 930 MB run).
std::vector<TileMemoryUsage> tileMemoryUsage(const std::vector<Tensor>& tensors, std::uint32_t numTiles,
                                             std::size_t largestPerTile = 5);

// Poplar-style out-of-memory summary of `usage` against `capacity` bytes per
// tile: how many tiles are over, by how many bytes in total, then the
// `worstTiles` tiles most over (each with its peak, always-live and
// not-always-live bytes and its largest variables with their categories).
// `where` names what was compiled or loaded ("graph.json"). Empty when no tile
// is over capacity.
struct OutOfMemory {
  std::size_t tilesOver = 0;
  std::uint64_t excessBytes = 0;         // sum over tiles of (peak - capacity)
  std::vector<TileMemoryUsage> worst;    // most over first, at most worstTiles
};
OutOfMemory findOutOfMemory(const std::vector<TileMemoryUsage>& usage, std::uint64_t capacity,
                            std::size_t worstTiles = 5);
std::string outOfMemorySummary(const OutOfMemory& oom, std::uint64_t capacity, std::uint32_t numTiles,
                               const std::string& where);

}  // namespace ipusim::ir
