#include "viewer/core/memory_tooltip.hpp"

#include <cstdio>

namespace ipusim::viewer {

std::string groupThousands(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (int at = int(digits.size()) - 3; at > 0; at -= 3) digits.insert(std::size_t(at), ",");
  return value < 0 ? "-" + digits : digits;
}

std::string tileMemoryTooltip(const MemorySummary& m, const std::vector<traces::TileMemoryRow>& rows,
                              std::size_t tile, std::int64_t tilesPerIpu) {
  if (tile >= m.tileCount()) return "tile " + std::to_string(tile) + ": no memory rows";
  std::string text = "tile " + std::to_string(tile);
  if (tilesPerIpu > 0)
    text += " (IPU " + std::to_string(std::int64_t(tile) / tilesPerIpu) + ", local " +
            std::to_string(std::int64_t(tile) % tilesPerIpu) + ")";
  const std::int64_t total = m.total[tile];
  text += std::string(": ") + (m.fromPeaks ? "peak " : "sum of tensors ") + groupThousands(total) + " B";
  char share[64];
  if (m.capacity > 0) {
    std::snprintf(share, sizeof share, " (%.1f%%)", 100.0 * double(total) / double(m.capacity));
    text += " of " + groupThousands(m.capacity) + " B" + share;
  }
  bool any = false;
  for (const auto& r : rows) {
    if (r.tile != std::int64_t(tile) || r.bytes == 0) continue;
    if (!any) text += "\ntile_memory by category:";
    any = true;
    text += "\n  " + r.category + ": " + groupThousands(r.bytes) + " B" + (r.alwaysLive ? "" : " (not always live)");
  }
  return text;
}

}  // namespace ipusim::viewer
