#include "viewer/core/counter_envelope.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ipusim::viewer {

std::vector<CounterColumn> counterEnvelope(const std::vector<std::int64_t>& ts,
                                           const std::vector<double>& value, const TimeAxis& axis) {
  std::vector<CounterColumn> out;
  const auto width = static_cast<int>(std::ceil(axis.widthPx()));
  // One sample before the view and one after keep the line continuous at the edges.
  auto first = std::lower_bound(ts.begin(), ts.end(), static_cast<std::int64_t>(axis.startCycle()));
  std::size_t i = static_cast<std::size_t>(first - ts.begin());
  if (i > 0) --i;
  while (i < ts.size()) {
    const int px = static_cast<int>(std::floor(axis.pixelOf(double(ts[i]))));
    CounterColumn c{px, value[i], value[i], value[i], value[i], 0};
    // The first sample of the next column: binary search, so dense series cost per pixel.
    const double nextCycle = axis.cycleAt(px + 1);
    const auto stop = static_cast<std::size_t>(
        std::lower_bound(ts.begin() + i, ts.end(), static_cast<std::int64_t>(std::ceil(nextCycle))) -
        ts.begin());
    const std::size_t end = std::max(stop, i + 1);
    // Min/max within the column: a scan, bounded by samples per pixel column.
    for (std::size_t k = i; k < end; ++k) {
      c.min = std::min(c.min, value[k]);
      c.max = std::max(c.max, value[k]);
    }
    c.last = value[end - 1];
    c.count = end - i;
    out.push_back(c);
    i = end;
    if (px > width) break;
  }
  return out;
}

std::optional<CounterColumn> columnNear(const std::vector<CounterColumn>& columns, int px, int reach) {
  std::optional<CounterColumn> best;
  for (const auto& c : columns) {
    const int distance = std::abs(c.px - px);
    if (distance <= reach && (!best || distance < std::abs(best->px - px))) best = c;
  }
  return best;
}

std::string describeCounterColumn(const CounterColumn& c) {
  char text[160];
  if (c.count <= 1)
    std::snprintf(text, sizeof text, "%.6g", c.last);
  else
    std::snprintf(text, sizeof text, "%llu values, %.6g .. %.6g (first %.6g, last %.6g)",
                  static_cast<unsigned long long>(c.count), c.min, c.max, c.first, c.last);
  return text;
}

}  // namespace ipusim::viewer
