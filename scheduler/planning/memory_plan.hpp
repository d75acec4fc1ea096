#pragma once
// MemoryPlan: byte addresses for every tensor interval on its tile.
// Always-live tensors (weights, optimizer state, stream buffers, the loss)
// get their own bytes; not-always-live ones (activations, gradients,
// temporaries) share addresses when their lifetimes — spans of program steps
// in schedule order — do not overlap (first fit). Then every tile's need is
// checked against its capacity.
#include "model/ir/executable.hpp"
#include "model/ir/tile_memory_usage.hpp"
#include "scheduler/planning/live_peak.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ipusim::scheduler {

struct MemoryPlanResult {
  std::uint64_t maxTileBytes = 0;            // the highest per-tile peak (ir::tileMemoryUsage)
  double meanTileBytes = 0;                  // over tiles used
  std::uint32_t tilesUsed = 0;
  std::uint32_t tilesOverCapacity = 0;       // only with allowOutOfMemory
};

// `useSpan[t]`: first and last step that uses tensor t. Sets the addresses in
// exe.tensors. Unless allowOutOfMemory, tiles needing more than `capacity`
// bytes throw std::invalid_argument with ir::outOfMemorySummary (Poplar's
// out-of-memory report: how many tiles are over, by how much in total, and
// the five worst tiles with their largest variables and categories), from
// ir::tileMemoryUsage: the figure every output shows.
// The summary then says what the worst tile holds (its always-live bytes by
// category and, from the spans, what is live at once at its peak) and the
// ways out `remedy` names from that (the compile's: a lower
// available_memory_proportion for temporaries, recomputation for kept
// activations, more IPUs for weights, the optimizer state's remedies), or
// empty; called only when a tile is over (the compile's builds training
// graphs to choose among its ways).
struct WorstTile {
  ir::TileMemoryUsage usage;  // the tile most over capacity
  LivePeak peak;              // what is live there at once (bytes 0 without spans)
};
using OutOfMemoryRemedy = std::function<std::string(const WorstTile&)>;
MemoryPlanResult planMemory(ir::Executable& exe, const std::vector<std::pair<std::size_t, std::size_t>>& useSpan,
                            std::uint32_t numTiles, std::uint64_t capacity, bool allowOutOfMemory,
                            const OutOfMemoryRemedy& remedy = {});

// After the plan: the tensors it did not place (replicate()'s collective
// buffers, added after it) placed on top of each tile's plan, as the model's
// load places them (model/hardware/memory_layout.cpp), and the figures and
// the check made again as planMemory makes them, over the tiles below
// `countedTiles` (one replica's: the others are its copies).
MemoryPlanResult placeAfterPlan(ir::Executable& exe, std::uint32_t numTiles, std::uint32_t countedTiles,
                                std::uint64_t capacity, bool allowOutOfMemory,
                                const OutOfMemoryRemedy& remedy = {});

}  // namespace ipusim::scheduler
