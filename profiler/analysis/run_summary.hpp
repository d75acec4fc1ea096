#pragma once
// RunSummary: the Engine::run calls of a profile, from the runs table (every
// run has a row, captured or not).
#include "traces/profile_rows.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

struct RunSummary {
  std::int64_t runs = 0;
  std::int64_t capturedRuns = 0;
  std::int64_t steps = 0;                 // over all runs
  std::int64_t minStepsPerRun = 0, maxStepsPerRun = 0;
  std::int64_t firstStart = 0, lastEnd = 0;  // cycles
  std::int64_t runCycles = 0;             // sum of run durations
  std::int64_t capturedCycles = 0;        // sum of captured run durations
  // Per entry point name ("train", "validation", "evaluate", "predict", ...),
  // in the order of their first run: its runs and steps.
  struct EntryRuns {
    std::string name;
    std::int64_t runs = 0, steps = 0;
  };
  std::vector<EntryRuns> byEntryPoint;
  // The steps of the job's task (fit's training, evaluate's, predict's): all
  // but a fit's validation steps (entry point "validation", beside the
  // training's). Throughput counts these, as `ipusim run` does. A job that
  // ran the validation entry point alone (`ipusim run --graph G --entry
  // validation`) has no other steps: its own are the task's (compare gave
  // it a throughput of 0 steps/s).
  std::int64_t taskSteps() const {
    if (byEntryPoint.size() < 2) return steps;
    std::int64_t n = steps;
    for (const EntryRuns& e : byEntryPoint)
      if (e.name == "validation") n -= e.steps;
    return n;
  }

  // First run start to last run end: the simulated time of the whole job.
  std::int64_t spanCycles() const { return lastEnd - firstStart; }
  double stepsPerRun() const { return runs > 0 ? double(steps) / double(runs) : 0.0; }
};

// Sums are checked (checked_sum.hpp): a total beyond 64 bits is a
// traces::ProfileError naming `file` and the column, never a negative figure.
RunSummary summarizeRuns(const std::vector<traces::RunRow>& runs, const std::string& file);

}  // namespace ipusim::profiler::analysis
