#include "scheduler/planning/live_peak.hpp"

#include "model/ir/tile_memory_usage.hpp"

#include <algorithm>
#include <map>

namespace ipusim::scheduler {
LivePeak livePeakOnTile(const ir::Executable& exe, const std::vector<UseSpan>& useSpan, std::uint32_t tile) {
  std::vector<std::pair<ir::Id, std::uint64_t>> onTile;  // not-always-live tensors' bytes on the tile
  for (const ir::Tensor& t : exe.tensors) {
    if (t.alwaysLive || t.id >= useSpan.size()) continue;
    std::uint64_t bytes = 0;
    for (const ir::TileInterval& iv : t.mapping)
      if (iv.tile == tile) bytes += (iv.end - iv.begin) * ir::sizeOf(t.dtype);
    if (bytes) onTile.push_back({t.id, bytes});
  }
  LivePeak peak;
  if (onTile.empty()) return peak;
  // A sweep over the steps: +bytes where a tensor's life starts, -bytes after it ends.
  std::map<std::size_t, std::int64_t> change;
  for (auto [id, bytes] : onTile) {
    change[useSpan[id].first] += std::int64_t(bytes);
    change[useSpan[id].second + 1] -= std::int64_t(bytes);
  }
  std::int64_t live = 0;
  for (auto [step, delta] : change) {
    live += delta;
    if (live > std::int64_t(peak.bytes)) peak.bytes = std::uint64_t(live), peak.step = step;
  }
  std::map<std::string, std::uint64_t> byCategory;
  for (auto [id, bytes] : onTile) {
    if (useSpan[id].first > peak.step || useSpan[id].second < peak.step) continue;
    byCategory[exe.tensors[id].category] += bytes;
    peak.live.push_back({id, bytes});
  }
  peak.categories.assign(byCategory.begin(), byCategory.end());
  std::stable_sort(peak.categories.begin(), peak.categories.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::sort(peak.live.begin(), peak.live.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return peak;
}

std::string describeLivePeak(const ir::Executable& exe, const LivePeak& peak, std::uint64_t layoutPeakBytes) {
  if (peak.bytes == 0) return "";
  // No step number: the plan numbers its steps otherwise than `report
  // --liveness` (which counts syncs and each program once), so a number here
  // pointed at another program there. The layout's figure differs by its
  // alignment and gaps; said, lest the two read as one figure twice.
  std::string s = "at its peak, " + std::to_string(peak.bytes) + " bytes not always live at once";
  if (layoutPeakBytes > peak.bytes)
    s += " (laid out with their alignment and the gaps between them: " + std::to_string(layoutPeakBytes) + ")";
  s += ":";
  for (std::size_t i = 0; i < peak.categories.size(); ++i)
    s += (i ? ", " : " ") + peak.categories[i].first + " " + std::to_string(peak.categories[i].second);
  s += "; largest:";
  for (std::size_t i = 0; i < std::min(kLivePeakTensorsListed, peak.live.size()); ++i) {
    const ir::Tensor& t = exe.tensors[peak.live[i].first];
    s += (i ? ", '" : " '") + ir::nameForSummary(t.name) + "' (" + t.category + ", " +
         std::to_string(peak.live[i].second) + " bytes)";
  }
  return s;
}

}  // namespace ipusim::scheduler
