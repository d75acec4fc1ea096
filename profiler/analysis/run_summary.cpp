#include "profiler/analysis/run_summary.hpp"

#include "profiler/analysis/checked_sum.hpp"

#include <algorithm>

namespace ipusim::profiler::analysis {

RunSummary summarizeRuns(const std::vector<traces::RunRow>& runs, const std::string& file) {
  RunSummary s;
  for (const auto& run : runs) {
    const std::int64_t duration = run.endCycle - run.startCycle;
    if (s.runs == 0) {
      s.firstStart = run.startCycle;
      s.lastEnd = run.endCycle;
      s.minStepsPerRun = s.maxStepsPerRun = run.steps;
    }
    ++s.runs;
    addChecked(s.steps, run.steps, file, "runs.steps");
    auto entry = std::find_if(s.byEntryPoint.begin(), s.byEntryPoint.end(),
                              [&](const RunSummary::EntryRuns& e) { return e.name == run.name; });
    if (entry == s.byEntryPoint.end()) entry = s.byEntryPoint.insert(s.byEntryPoint.end(), {run.name, 0, 0});
    ++entry->runs;
    addChecked(entry->steps, run.steps, file, "runs.steps");
    s.minStepsPerRun = std::min(s.minStepsPerRun, run.steps);
    s.maxStepsPerRun = std::max(s.maxStepsPerRun, run.steps);
    s.firstStart = std::min(s.firstStart, run.startCycle);
    s.lastEnd = std::max(s.lastEnd, run.endCycle);
    addChecked(s.runCycles, duration, file, "runs.end_cycle - start_cycle");
    if (run.captured) {
      ++s.capturedRuns;
      addChecked(s.capturedCycles, duration, file, "runs.end_cycle - start_cycle");
    }
  }
  return s;
}

}  // namespace ipusim::profiler::analysis
