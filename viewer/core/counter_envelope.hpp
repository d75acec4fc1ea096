#pragma once
// Counter level of detail: a counter series drawn as a line reduced to one
// min/max pair per pixel column, so frame cost follows the width in pixels.
#include "viewer/core/time_axis.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::viewer {

struct CounterColumn {
  int px = 0;
  double min = 0, max = 0, first = 0, last = 0;
};

// Columns (in pixel order) that hold at least one sample of the series.
std::vector<CounterColumn> counterEnvelope(const std::vector<std::int64_t>& ts,
                                           const std::vector<double>& value, const TimeAxis& axis);

}  // namespace ipusim::viewer
