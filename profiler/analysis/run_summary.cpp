#include "profiler/analysis/run_summary.hpp"

#include <algorithm>

namespace ipusim::profiler::analysis {

RunSummary summarizeRuns(const std::vector<traces::RunRow>& runs) {
  RunSummary s;
  for (const auto& run : runs) {
    const std::int64_t duration = run.endCycle - run.startCycle;
    if (s.runs == 0) {
      s.firstStart = run.startCycle;
      s.lastEnd = run.endCycle;
      s.minStepsPerRun = s.maxStepsPerRun = run.steps;
    }
    ++s.runs;
    s.steps += run.steps;
    s.minStepsPerRun = std::min(s.minStepsPerRun, run.steps);
    s.maxStepsPerRun = std::max(s.maxStepsPerRun, run.steps);
    s.firstStart = std::min(s.firstStart, run.startCycle);
    s.lastEnd = std::max(s.lastEnd, run.endCycle);
    s.runCycles += duration;
    if (run.captured) {
      ++s.capturedRuns;
      s.capturedCycles += duration;
    }
  }
  return s;
}

}  // namespace ipusim::profiler::analysis
