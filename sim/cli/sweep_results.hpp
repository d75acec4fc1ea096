#pragma once
// The results of a sweep's points and the files they are written to:
// sweep.csv, sweep.json and sweep.png (a gnuplot plot).
//
// Per point, from the `ipusim run --json` summary of its child process:
// simulated time, cycles, steps, Engine::run calls, throughput (steps per
// simulated second), final loss, and the phase shares of the simulated time:
// steps x a steady-state step's compute (exchange, sync, stream copy)
// cycles, over the total cycles; "host & idle" is the rest — the time the
// device is not executing a step's phases (Engine::run overhead, waits
// between runs, idle inside steps).
#include "sim/cli/sweep_plan.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ipusim::sim {

// Each device phase of `run --json`'s step_cycles as a share of the
// simulated time; host and idle: the rest. (The IPU-Link, collective and
// Streaming Memory phases were missing, so their cycles were counted as
// host and idle: a sweep of streamingMemory.bytesPerSecond showed the
// offloaded state's copies as host time.)
struct SweepPhaseShares {
  double compute = 0, exchange = 0, sync = 0, streamCopy = 0, ipuLink = 0, collective = 0, streamingMemory = 0,
         hostAndIdle = 0;
};

struct SweepResult {
  SweepPoint point;
  bool ok = false;
  int exitCode = 0;
  std::string error;                 // failed points: the child's last error line
  double simulatedSeconds = 0;
  std::uint64_t cycles = 0, steps = 0, engineRuns = 0;
  double throughput = 0;             // steps per simulated second
  double examplesPerSecond = 0;      // the run's examples_per_second (batch x replicas per step)
  // Each batch's latency (run --json batch_latency_seconds), when measured (outfeed mode ALL).
  std::optional<double> latencyP50, latencyP99;
  std::optional<double> finalLoss;
  SweepPhaseShares shares;
};

// Fills a result's figures from a child's `ipusim run --json` output.
// Throws std::invalid_argument naming the missing or malformed key.
void readRunSummary(const nlohmann::json& summary, SweepResult& result);

nlohmann::json sweepToJson(const SweepPlan& plan, const std::vector<SweepResult>& results);
std::string sweepToCsv(const SweepPlan& plan, const std::vector<SweepResult>& results);

// The gnuplot script drawing `dataFile` (written by plotData) into `pngPath`.
std::string plotData(const std::vector<SweepResult>& results);
std::string plotScript(const SweepPlan& plan, const std::vector<SweepResult>& results, const std::string& dataFile,
                       const std::string& pngPath);

}  // namespace ipusim::sim
