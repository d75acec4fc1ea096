#pragma once
// Tile view rows: the tiles shown (all of them, zoomed down to one) split
// into pixel rows; each row draws the busiest of its tiles, so a phase's
// critical tile is never averaged away.
#include <cstdint>
#include <vector>

namespace ipusim::viewer {

struct TileWindow {
  double firstTile = 0;   // top of the view, in tiles (fractional while zooming)
  double tileCount = 1;   // tiles visible, >= 1
  // Zoom around `anchor` (0..1 of the height); factor > 1 shows fewer tiles.
  void zoom(double anchor, double factor, double totalTiles);
  void clamp(double totalTiles);
};

// For `rows` rows over the window: the max busy cycles among the tiles of each.
std::vector<std::uint32_t> tileRowMaxima(const std::vector<std::uint32_t>& cycles,
                                         const TileWindow& window, int rows);

}  // namespace ipusim::viewer
