#pragma once
// The memory view's tooltip for one tile: what tile_memory holds for it, by
// category, against the capacity — "tile 17 (IPU 0, local 17): 126,564 B of
// 638,976 B (19.8%)" then one line per category with bytes and share.
#include "viewer/core/memory_summary.hpp"

#include <cstdint>
#include <string>

namespace ipusim::viewer {

// `tilesPerIpu` names the IPU and local index (0: not shown).
std::string tileMemoryTooltip(const MemorySummary& summary, std::size_t tile, std::int64_t tilesPerIpu);

// 126564 -> "126,564".
std::string groupThousands(std::int64_t value);

}  // namespace ipusim::viewer
