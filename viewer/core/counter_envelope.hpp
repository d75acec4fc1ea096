#pragma once
// Counter level of detail: a counter series drawn as a line reduced to one
// min/max pair per pixel column, so frame cost follows the width in pixels.
#include "viewer/core/time_axis.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::viewer {

struct CounterColumn {
  int px = 0;
  double min = 0, max = 0, first = 0, last = 0;
  std::uint64_t count = 0;  // values in the column
};

// Columns (in pixel order) that hold at least one sample of the series.
std::vector<CounterColumn> counterEnvelope(const std::vector<std::int64_t>& ts,
                                           const std::vector<double>& value, const TimeAxis& axis);

// The column at pixel `px`, else the nearest within `reach` pixels.
std::optional<CounterColumn> columnNear(const std::vector<CounterColumn>& columns, int px, int reach);

// What a tooltip says of a column: its value, or of several values their
// count, least, greatest, first and last.
std::string describeCounterColumn(const CounterColumn& column);

}  // namespace ipusim::viewer
