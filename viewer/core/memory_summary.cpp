#include "viewer/core/memory_summary.hpp"

#include <algorithm>

namespace ipusim::viewer {

MemorySummary summarizeMemory(const std::vector<traces::TileMemoryRow>& rows,
                              const std::vector<traces::TileMemoryPeakRow>& peaks, std::int64_t tiles,
                              std::int64_t capacity) {
  MemorySummary m;
  m.capacity = capacity;
  std::map<std::string, std::size_t> categoryIndex;
  std::int64_t maxTile = tiles - 1;
  for (const auto& p : peaks) maxTile = std::max(maxTile, p.tile);
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
  m.categoryBytes.assign(m.categories.size(), 0);
  for (const auto& r : rows) {
    if (r.tile < 0) continue;
    m.bytes[r.tile][categoryIndex[r.category]] += r.bytes;
    m.categoryBytes[categoryIndex[r.category]] += r.bytes;
    m.total[r.tile] += r.bytes;
  }
  m.fromPeaks = !peaks.empty();
  if (m.fromPeaks) {
    std::vector<std::int64_t> peakOf(count, 0);
    for (const auto& p : peaks)
      if (p.tile >= 0) peakOf[std::size_t(p.tile)] = p.peakBytes;
    for (std::size_t t = 0; t < count; ++t) {
      const std::int64_t peak = peakOf[t];
      const std::int64_t sum = m.total[t];
      if (sum > peak && sum > 0)
        for (auto& b : m.bytes[t]) b = std::int64_t(double(b) * double(peak) / double(sum) + 0.5);
      m.total[t] = peak;
    }
  }
  for (std::int64_t t : m.total) {
    m.maxTotal = std::max(m.maxTotal, t);
    if (capacity > 0 && t > capacity) ++m.tilesOverCapacity;
  }
  return m;
}

}  // namespace ipusim::viewer
