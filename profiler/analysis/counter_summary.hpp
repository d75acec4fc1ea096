#pragma once
// CounterSummary: first / last / min / max of a counter series (e.g. the
// training loss, counter track "loss").
#include "traces/profile_reader.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace ipusim::profiler::analysis {

struct CounterSummary {
  std::string name;
  std::int64_t samples = 0;
  double first = 0, last = 0, min = 0, max = 0;
  std::int64_t firstTs = 0, lastTs = 0, minTs = 0;  // cycles
};

// The summary of the counter track of kind "counter" named `name` (min and
// max skip NaN values unless all are NaN; first and last are as stored), or
// nullopt when the profile has none (or it has no samples).
std::optional<CounterSummary> summarizeCounter(const traces::ProfileReader& reader,
                                               const std::string& name);

}  // namespace ipusim::profiler::analysis
