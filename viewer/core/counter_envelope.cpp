#include "viewer/core/counter_envelope.hpp"

#include <algorithm>
#include <cmath>

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
    CounterColumn c{px, value[i], value[i], value[i], value[i]};
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
    out.push_back(c);
    i = end;
    if (px > width) break;
  }
  return out;
}

}  // namespace ipusim::viewer
