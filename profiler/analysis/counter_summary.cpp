#include "profiler/analysis/counter_summary.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::profiler::analysis {

std::optional<CounterSummary> summarizeCounter(const traces::ProfileReader& reader,
                                               const std::string& name) {
  for (const auto& track : reader.tracks()) {
    if (track.kind != "counter" || track.name != name) continue;
    auto rows = reader.counters(track.id);
    if (rows.empty()) return std::nullopt;
    std::stable_sort(rows.begin(), rows.end(),
                     [](const traces::CounterRow& a, const traces::CounterRow& b) { return a.ts < b.ts; });
    CounterSummary s;
    s.name = name;
    s.samples = static_cast<std::int64_t>(rows.size());
    s.first = s.min = s.max = rows.front().value;
    s.firstTs = s.minTs = rows.front().ts;
    // min and max skip NaN values (a diverging training's), unless every value is NaN.
    for (const auto& row : rows) {
      if (std::isnan(row.value)) continue;
      if (std::isnan(s.min) || row.value < s.min) { s.min = row.value; s.minTs = row.ts; }
      if (std::isnan(s.max) || row.value > s.max) s.max = row.value;
    }
    s.last = rows.back().value;
    s.lastTs = rows.back().ts;
    return s;
  }
  return std::nullopt;
}

}  // namespace ipusim::profiler::analysis
