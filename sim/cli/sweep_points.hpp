#pragma once
// A sweep's points as child processes: point N is `ipusim run WORKLOAD
// --json ...` (SystemC elaborates once per process), its output and errors
// written to points/N.json and points/N.log, its reports (autoReport) to
// points/N/. The children run in a process group of their own, which a
// SIGINT, SIGTERM or SIGHUP of the sweep ends (sim/host/interrupt.hpp), and
// each ends itself when the sweep dies of anything else (SIGKILL). A child
// of an MPI rank does not inherit the launcher's variables: it is not a rank.
//
// The one-process sweep runs every point here (runPointsHere); under mpirun
// each rank runs the points rank 0 deals it (sweep_ranks.hpp) with the same
// PointRunner, and the results are made from what a point left
// (FinishedPoint) by the same function, collectPoint, on rank 0.
#include "sim/cli/progress_bar.hpp"
#include "sim/cli/sweep_plan.hpp"
#include "sim/cli/sweep_results.hpp"
#include "sim/options/engine_options.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::sim {

// What a finished point left: its exit status, its standard output (the
// run summary) and its last error line (empty when it succeeded).
struct FinishedPoint {
  std::size_t index = 0;
  int status = 0;
  std::string summary;
  std::string errorLine;
};

class PointRunner {
 public:
  PointRunner(const SweepPlan& plan, const EngineOptions& options, std::filesystem::path pointsDir);
  PointRunner(const PointRunner&) = delete;
  PointRunner& operator=(const PointRunner&) = delete;

  // Starts point `index` (of the plan). Throws std::runtime_error when it cannot.
  void start(std::size_t index);
  std::size_t running() const { return running_.size(); }
  // A point that has ended: waits for one (`block`), or returns nothing when
  // none has ended yet; nothing too when none runs.
  std::optional<FinishedPoint> finish(bool block);

 private:
  const SweepPlan& plan_;
  const EngineOptions& options_;
  std::filesystem::path pointsDir_;
  std::string self_;
  std::vector<std::string> launcherVariables_;
  int group_ = 0;                         // the running children's process group (0: none running)
  std::map<int, std::size_t> running_;    // pid -> point
};

// A point's result from what it left.
SweepResult collectPoint(const SweepPlan& plan, const FinishedPoint& finished);

// "sweep: point 3 (tiles=16) failed: ..." on `out`, clearing the progress
// bar's line first when it is drawn there; `where` is added after the
// label (" on rank 1"), or empty.
void sayPointFailed(std::FILE* out, const ProgressBar& progress, const SweepResult& result, const std::string& where);

// Every point in this process, `jobs` at a time, with a progress bar.
std::vector<SweepResult> runPointsHere(const SweepPlan& plan, PointRunner& runner, unsigned jobs);

}  // namespace ipusim::sim
