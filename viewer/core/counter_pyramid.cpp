#include "viewer/core/counter_pyramid.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::viewer {

CounterPyramid::CounterPyramid(const traces::CounterSummary& s) : valueCount_(s.valueCount), origin_(s.originTs) {
  Level base;
  base.bucketCycles = std::max<std::int64_t>(1, s.bucketCycles);
  base.count.assign(s.count.begin(), s.count.end());
  base.firstTs = s.firstTs;
  base.lastTs = s.lastTs;
  base.min = s.min;
  base.max = s.max;
  base.first = s.first;
  base.last = s.last;
  valuesBefore_.resize(base.count.size() + 1, 0);
  bool any = false;
  for (std::size_t b = 0; b < base.count.size(); ++b) {
    valuesBefore_[b + 1] = valuesBefore_[b] + std::int64_t(base.count[b]);
    if (base.count[b] == 0) continue;
    for (const double v : {base.min[b], base.max[b]}) {
      if (std::isnan(v)) continue;
      min_ = any ? std::min(min_, v) : v;
      max_ = any ? std::max(max_, v) : v;
      any = true;
    }
  }
  levels_.push_back(std::move(base));
  // Pairwise merges of neighbouring buckets.
  while (levels_.back().count.size() > 1) {
    const Level& below = levels_.back();
    Level up;
    up.bucketCycles = below.bucketCycles * 2;
    const std::size_t n = (below.count.size() + 1) / 2;
    up.count.resize(n);
    up.firstTs.resize(n);
    up.lastTs.resize(n);
    up.min.resize(n);
    up.max.resize(n);
    up.first.resize(n);
    up.last.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t a = 2 * i, b = a + 1;
      const bool hasA = below.count[a] > 0, hasB = b < below.count.size() && below.count[b] > 0;
      const std::size_t from = hasA ? a : b, to = hasB ? b : a;  // the first and last non-empty child
      up.count[i] = below.count[a] + (b < below.count.size() ? below.count[b] : 0);
      if (!hasA && !hasB) continue;
      up.firstTs[i] = below.firstTs[from];
      up.lastTs[i] = below.lastTs[to];
      up.first[i] = below.first[from];
      up.last[i] = below.last[to];
      up.min[i] = hasA && hasB ? std::min(below.min[a], below.min[b]) : below.min[from];
      up.max[i] = hasA && hasB ? std::max(below.max[a], below.max[b]) : below.max[from];
    }
    levels_.push_back(std::move(up));
  }
}

std::int64_t CounterPyramid::valuesMeeting(std::int64_t from, std::int64_t to) const {
  const Level& L = levels_[0];
  const auto n = std::int64_t(L.count.size());
  if (to <= from || n == 0) return 0;
  const auto bucketOf = [&](std::int64_t ts) {
    return ts < origin_ ? std::int64_t(-1) : std::min(n, (ts - origin_) / L.bucketCycles);
  };
  const std::int64_t b0 = std::max<std::int64_t>(0, bucketOf(from)), b1 = std::min(n - 1, bucketOf(to - 1));
  if (b1 < b0) return 0;
  return valuesBefore_[std::size_t(b1 + 1)] - valuesBefore_[std::size_t(b0)];
}

std::vector<CounterColumn> CounterPyramid::columns(const TimeAxis& axis) const {
  std::vector<CounterColumn> out;
  // The widest level whose buckets still fit in a pixel column.
  std::size_t level = 0;
  while (level + 1 < levels_.size() && double(levels_[level + 1].bucketCycles) <= axis.cyclesPerPixel()) ++level;
  const Level& L = levels_[level];
  const auto n = std::int64_t(L.count.size());
  const auto width = static_cast<int>(std::ceil(axis.widthPx()));
  const double start = std::floor(axis.startCycle());
  std::int64_t b = std::clamp<std::int64_t>(
      std::int64_t(std::floor((start - double(origin_)) / double(L.bucketCycles))), 0, n);
  // The last value before the view (in the last non-empty bucket before
  // the one holding the view's start) keeps the line continuous at the left edge.
  for (std::int64_t k = b - 1; k >= 0; --k) {
    const auto i = std::size_t(k);
    if (L.count[i] == 0) continue;
    const double last = L.last[i];
    out.push_back(CounterColumn{int(std::floor(axis.pixelOf(double(L.lastTs[i])))), last, last, last, last, 1});
    break;
  }
  while (b < n) {
    const auto i = std::size_t(b);
    if (L.count[i] == 0) {
      ++b;
      continue;
    }
    const int px = static_cast<int>(std::floor(axis.pixelOf(double(L.firstTs[i]))));
    CounterColumn c{px, L.min[i], L.max[i], L.first[i], L.last[i], L.count[i]};
    // Buckets whose first value is before the next pixel column join this one.
    const double next = std::ceil(axis.cycleAt(px + 1));
    for (++b; b < n; ++b) {
      const auto j = std::size_t(b);
      if (L.count[j] == 0) continue;
      if (double(L.firstTs[j]) >= next) break;
      c.min = std::min(c.min, L.min[j]);
      c.max = std::max(c.max, L.max[j]);
      c.last = L.last[j];
      c.count += L.count[j];
    }
    out.push_back(c);
    if (px > width) break;
  }
  return out;
}

std::optional<WindowPlan> planCounterWindow(const CounterPyramid& pyramid, double viewFrom, double viewTo,
                                            std::int64_t maxValues) {
  const auto from = std::int64_t(std::floor(viewFrom)), to = std::int64_t(std::ceil(viewTo)) + 1;
  const std::int64_t margin = to - from;
  for (const std::int64_t m : {margin, std::int64_t(0)})
    if (pyramid.valuesMeeting(from - m, to + m) <= maxValues) return WindowPlan{from - m, to + m, {}};
  return std::nullopt;
}

}  // namespace ipusim::viewer
