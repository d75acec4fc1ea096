#pragma once
// MemoryPlan: byte addresses for every tensor interval on its tile.
// Always-live tensors (weights, optimizer state, stream buffers, the loss)
// get their own bytes; not-always-live ones (activations, gradients,
// temporaries) share addresses when their lifetimes — spans of program steps
// in schedule order — do not overlap (first fit). Then every tile's need is
// checked against its capacity.
#include "model/ir/executable.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace ipusim::scheduler {

struct MemoryPlanResult {
  std::vector<std::uint64_t> bytesPerTile;  // highest byte used, per tile
  std::uint64_t maxTileBytes = 0;
  double meanTileBytes = 0;                  // over tiles used
  std::uint32_t tilesUsed = 0;
};

// `useSpan[t]`: first and last step that uses tensor t. Sets the addresses in
// exe.tensors. Unless allowOutOfMemory, a tile needing more than `capacity`
// bytes throws std::invalid_argument naming the tile, its need and its capacity.
MemoryPlanResult planMemory(ir::Executable& exe, const std::vector<std::pair<std::size_t, std::size_t>>& useSpan,
                            std::uint32_t numTiles, std::uint64_t capacity, bool allowOutOfMemory);

}  // namespace ipusim::scheduler
