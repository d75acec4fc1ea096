#pragma once
// What a tile holds when its not-always-live bytes peak: the step, the bytes
// live there by category, and the largest tensors. The out-of-memory summary
// (ir::outOfMemorySummary) says how much a tile needs and its largest
// variables over the whole step; this says what is live at once, which is
// what a remedy has to shrink (the operation's temporaries, the activations
// kept for the backward pass, the gradients).
//
// Contract of livePeakOnTile(exe, useSpan, tile):
// - useSpan[t]: the first and last program step using tensor t (the memory
//   plan's spans); tensors beyond useSpan's size are taken as always live.
// - Counts the not-always-live tensors' bytes on `tile` at each step (their
//   intervals there, unaligned) and returns the step where their sum is
//   highest (the earliest of equal ones), that sum, its categories (largest
//   first) and every tensor live there (largest first, ties by id).
//   Empty (bytes 0) when no not-always-live tensor lies on the tile.
// - The plan's address peak (ir::TileMemoryUsage::notAlwaysLivePeakBytes)
//   is at least this sum: first fit may leave gaps.
#include "model/ir/executable.hpp"
#include "scheduler/lowering/ir_builder.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ipusim::scheduler {

struct LivePeak {
  std::size_t step = 0;
  std::uint64_t bytes = 0;
  std::vector<std::pair<std::string, std::uint64_t>> categories;  // largest first
  std::vector<std::pair<ir::Id, std::uint64_t>> live;             // tensor, its bytes on the tile
};
// How many of the live tensors, the largest, a summary names.
inline constexpr std::size_t kLivePeakTensorsListed = 5;

LivePeak livePeakOnTile(const ir::Executable& exe, const std::vector<UseSpan>& useSpan, std::uint32_t tile);

// One line for the summary: "at its peak, N bytes not always live at once
// (laid out with their alignment and the gaps between them: L): C1 B1, C2
// B2; largest: 'name' (category, bytes), ..." (kLivePeakTensorsListed of
// them), the parenthesis only when
// `layoutPeakBytes` (the tile's notAlwaysLivePeakBytes) exceeds N.
std::string describeLivePeak(const ir::Executable& exe, const LivePeak& peak, std::uint64_t layoutPeakBytes = 0);

}  // namespace ipusim::scheduler
