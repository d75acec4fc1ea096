#include "viewer/core/tile_rows.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::viewer {

void TileWindow::zoom(double anchor, double factor, double totalTiles) {
  if (factor <= 0) return;
  const double anchorTile = firstTile + anchor * tileCount;
  tileCount = tileCount / factor;
  firstTile = anchorTile - anchor * tileCount;
  clamp(totalTiles);
}

void TileWindow::clamp(double totalTiles) {
  totalTiles = std::max(1.0, totalTiles);
  tileCount = std::clamp(tileCount, 1.0, totalTiles);
  firstTile = std::clamp(firstTile, 0.0, totalTiles - tileCount);
}

std::vector<std::uint32_t> tileRowMaxima(const std::vector<std::uint32_t>& cycles,
                                         const TileWindow& window, int rows) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(std::max(0, rows)), 0);
  if (cycles.empty()) return out;
  const double perRow = window.tileCount / std::max(1, rows);
  for (int r = 0; r < rows; ++r) {
    const auto lo = static_cast<std::size_t>(std::floor(window.firstTile + r * perRow));
    auto hi = static_cast<std::size_t>(std::ceil(window.firstTile + (r + 1) * perRow));
    hi = std::min(std::max(hi, lo + 1), cycles.size());
    for (std::size_t t = lo; t < hi; ++t) out[r] = std::max(out[r], cycles[t]);
  }
  return out;
}

}  // namespace ipusim::viewer
