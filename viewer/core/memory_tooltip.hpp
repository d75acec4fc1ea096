#pragma once
// The memory view's tooltip for one tile: its figure (the peak, or the sum of
// its rows in older profiles) against the capacity — "tile 17 (IPU 0, local
// 17): peak 126,564 B of 638,976 B (19.8%)" — then what tile_memory holds for
// it, one line per row: category, bytes, always live or not. Not-always-live
// tensors share bytes, so the rows can add up to more than the peak.
#include "traces/profile_rows.hpp"
#include "viewer/core/memory_summary.hpp"

#include <vector>

#include <cstdint>
#include <string>

namespace ipusim::viewer {

// `tilesPerIpu` names the IPU and local index (0: not shown); `rows` are the
// profile's tile_memory rows (any order, any tiles: the tile's are picked).
std::string tileMemoryTooltip(const MemorySummary& summary, const std::vector<traces::TileMemoryRow>& rows,
                              std::size_t tile, std::int64_t tilesPerIpu);

// 126564 -> "126,564".
std::string groupThousands(std::int64_t value);

}  // namespace ipusim::viewer
