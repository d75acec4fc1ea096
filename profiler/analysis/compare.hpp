#pragma once
// Comparison of two profiles (`ipusim compare A B`): per side the simulated
// time of the whole job, Engine::run count, steps, throughput, where the
// captured device time goes, overlap and host bytes; and the speedup of B
// over A.
#include "profiler/analysis/device_activity.hpp"
#include "profiler/analysis/host_wait.hpp"
#include "profiler/analysis/profile_target.hpp"
#include "profiler/analysis/run_summary.hpp"
#include "traces/profile_reader.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace ipusim::profiler::analysis {

struct ProfileFigures {
  ProfileTarget target;
  RunSummary runs;
  DeviceActivity captured;   // over the captured runs
  HostWaitBreakdown hostWait;  // ipuWaitingForHost(reader), see host_wait.hpp
  std::int64_t totalCycles = 0;  // jobCycles(reader), see job_cycles.hpp
  // The fullest tile's peak (summarizeTileMemory: `report`'s figure), 0
  // when the profile has no tile memory rows.
  std::int64_t maxTileBytes = 0;
  // The whole job in seconds (meta clock_hz).
  double simulatedSeconds() const { return target.cyclesToSeconds(totalCycles); }
  // Training steps per simulated second; 0 when no time passed.
  double throughput() const;
  // Examples per simulated second (steps x batch_size x replicas); 0 when
  // the profile does not say its batch (meta batch_size) or no time passed.
  double exampleThroughput() const;
};

struct Comparison {
  ProfileFigures a, b;
  // How many times faster B is than A, in examples/s when both profiles
  // know their global batch and it differs (1 vs 4 replicas: a step of B
  // trains 4x the examples), else in steps/s when both ran steps, else
  // simulatedSeconds(A) / simulatedSeconds(B); 0 when undefined (no time).
  double speedup = 0;
  // "examples", "steps" or "time": what `speedup` compares.
  std::string speedupBasis;
  // throughput(B) / throughput(A) (0 when undefined), shown beside an
  // examples/s speedup.
  double stepSpeedup = 0;
};

// Throws traces::ProfileError when a profile has no clock_hz.
ProfileFigures measureProfile(const traces::ProfileReader& reader);
Comparison compareProfiles(const traces::ProfileReader& a, const traces::ProfileReader& b);

// {"profile", "simulated_cycles", "simulated_seconds", "ipu_waiting_for_host", "engine_runs", "steps", "steps_per_run",
//  "throughput_steps_per_second", "proportions": {...}, "overlap_percent",
//  "bytes_to_device", "bytes_to_host", ...}
nlohmann::json figuresToJson(const ProfileFigures& figures);
// {"a": {...}, "b": {...}, "speedup": x, "speedup_basis": "examples"|"steps"|"time", "step_speedup": y}
nlohmann::json comparisonToJson(const Comparison& comparison);
void printComparison(const Comparison& comparison, std::ostream& out);

}  // namespace ipusim::profiler::analysis
