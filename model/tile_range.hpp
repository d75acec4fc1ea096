#pragma once
// TileRange: the tiles [begin, end) whose functional work one process does
// when several processes share a replicated run (LoadOptions::functionalTiles).
#include <cstdint>
#include <limits>

namespace ipusim::model {

struct TileRange {
  std::uint32_t begin = 0;
  std::uint32_t end = std::numeric_limits<std::uint32_t>::max();

  bool contains(std::uint32_t tile) const { return tile >= begin && tile < end; }
  // Every tile of a target of `tiles` tiles.
  bool coversAll(std::uint32_t tiles) const { return begin == 0 && end >= tiles; }
};

}  // namespace ipusim::model
