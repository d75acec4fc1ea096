#include "viewer/core/busy_summary.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace ipusim::viewer {

BusySummary::BusySummary(const traces::SliceSummary& summary, const std::vector<std::string>& strings)
    : depth_(summary.depth), origin_(summary.originTs) {
  Level base;
  base.bucketCycles = std::max<std::int64_t>(1, summary.bucketCycles);
  base.busy.assign(summary.busy.begin(), summary.busy.end());
  base.category.resize(summary.size(), kNoCategory);
  std::unordered_map<std::uint32_t, std::uint16_t> local;
  for (std::size_t b = 0; b < summary.size(); ++b) {
    const std::uint32_t c = b < summary.category.size() ? summary.category[b] : traces::SliceSummary::kNoCategory;
    if (c == traces::SliceSummary::kNoCategory || c >= strings.size()) continue;
    auto it = local.find(c);
    if (it == local.end()) {
      if (names_.size() >= kNoCategory) continue;  // more categories than a summary can name
      it = local.emplace(c, static_cast<std::uint16_t>(names_.size())).first;
      names_.push_back(strings[c]);
    }
    base.category[b] = it->second;
  }
  levels_.push_back(std::move(base));
  // Pairwise merges: busy adds up; the category is the busier child's.
  while (levels_.back().busy.size() > 1) {
    const Level& below = levels_.back();
    Level up;
    up.bucketCycles = below.bucketCycles * 2;
    const std::size_t n = (below.busy.size() + 1) / 2;
    up.busy.resize(n);
    up.category.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t a = 2 * i, b = std::min(a + 1, below.busy.size() - 1);
      up.busy[i] = below.busy[a] + (b != a ? below.busy[b] : 0);
      const bool first = below.category[b] == kNoCategory || (below.category[a] != kNoCategory && below.busy[a] >= below.busy[b]);
      up.category[i] = first ? below.category[a] : below.category[b];
    }
    levels_.push_back(std::move(up));
  }
}

std::int64_t BusySummary::endTs() const {
  return origin_ + levels_[0].bucketCycles * std::int64_t(levels_[0].busy.size());
}

void BusySummary::spans(const TimeAxis& axis, std::vector<BusySpan>& out) const {
  const double cpp = axis.cyclesPerPixel();
  const double width = axis.widthPx();
  // The widest level whose buckets still fit in a pixel column.
  std::size_t level = 0;
  while (level + 1 < levels_.size() && double(levels_[level + 1].bucketCycles) <= cpp) ++level;
  const Level& L = levels_[level];
  const auto count = std::int64_t(L.busy.size());
  const double bw = double(L.bucketCycles);
  // Only the pixel columns the summary covers.
  const double firstPx = std::max(0.0, std::floor(axis.pixelOf(double(origin_))));
  const double lastPx = std::min(width, std::ceil(axis.pixelOf(double(endTs()))));
  bool open = false;
  BusySpan current;
  for (double px = firstPx; px < lastPx; px += 1) {
    const double c0 = axis.cycleAt(px), c1 = axis.cycleAt(px + 1);
    const auto b0 = std::max<std::int64_t>(0, std::int64_t(std::floor((c0 - double(origin_)) / bw)));
    const auto b1 = std::min<std::int64_t>(count - 1, std::int64_t(std::ceil((c1 - double(origin_)) / bw)) - 1);
    std::uint64_t busy = 0, best = 0;
    std::uint16_t category = kNoCategory;
    for (std::int64_t b = b0; b <= b1; ++b) {
      busy += L.busy[std::size_t(b)];
      if (L.category[std::size_t(b)] != kNoCategory && L.busy[std::size_t(b)] >= best) {
        best = L.busy[std::size_t(b)];
        category = L.category[std::size_t(b)];
      }
    }
    const double covered = double(std::max<std::int64_t>(1, b1 - b0 + 1)) * bw;
    // Eighths, at least one when anything is busy, so a sparse column still shows.
    const float share =
        busy == 0 ? 0.0f : float(std::clamp(std::ceil(double(busy) / covered * 8.0), 1.0, 8.0) / 8.0);
    if (share == 0 || category == kNoCategory) {
      if (open) out.push_back(current);
      open = false;
      continue;
    }
    if (open && current.category == category && current.busy == share && current.x1 == px) {
      current.x1 = px + 1;
      continue;
    }
    if (open) out.push_back(current);
    current = {px, px + 1, share, category};
    open = true;
  }
  if (open) out.push_back(current);
}

}  // namespace ipusim::viewer
