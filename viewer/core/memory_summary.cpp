#include "viewer/core/memory_summary.hpp"

#include <algorithm>

namespace ipusim::viewer {

MemorySummary summarizeMemory(const std::vector<traces::TileMemoryRow>& rows, std::int64_t tiles,
                              std::int64_t capacity) {
  MemorySummary m;
  m.capacity = capacity;
  std::map<std::string, std::size_t> categoryIndex;
  std::int64_t maxTile = tiles - 1;
  for (const auto& r : rows) {
    maxTile = std::max(maxTile, r.tile);
    if (!categoryIndex.count(r.category)) {
      categoryIndex[r.category] = m.categories.size();
      m.categories.push_back(r.category);
    }
  }
  const auto count = static_cast<std::size_t>(std::max<std::int64_t>(0, maxTile + 1));
  m.bytes.assign(count, std::vector<std::int64_t>(m.categories.size(), 0));
  m.total.assign(count, 0);
  for (const auto& r : rows) {
    if (r.tile < 0) continue;
    m.bytes[r.tile][categoryIndex[r.category]] += r.bytes;
    m.total[r.tile] += r.bytes;
  }
  for (std::int64_t t : m.total) {
    m.maxTotal = std::max(m.maxTotal, t);
    if (capacity > 0 && t > capacity) ++m.tilesOverCapacity;
  }
  return m;
}

}  // namespace ipusim::viewer
