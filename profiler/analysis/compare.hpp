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

namespace ipusim::profiler::analysis {

struct ProfileFigures {
  ProfileTarget target;
  RunSummary runs;
  DeviceActivity captured;   // over the captured runs
  HostWaitBreakdown hostWait;  // ipuWaitingForHost(reader), see host_wait.hpp
  std::int64_t totalCycles = 0;  // jobCycles(reader), see job_cycles.hpp
  // The whole job in seconds (meta clock_hz).
  double simulatedSeconds() const { return target.cyclesToSeconds(totalCycles); }
  // Training steps per simulated second; 0 when no time passed.
  double throughput() const;
};

struct Comparison {
  ProfileFigures a, b;
  // How many times faster B is than A: throughput(B) / throughput(A) when
  // both ran steps, else simulatedSeconds(A) / simulatedSeconds(B); 0 when
  // undefined (no time).
  double speedup = 0;
};

// Throws traces::ProfileError when a profile has no clock_hz.
ProfileFigures measureProfile(const traces::ProfileReader& reader);
Comparison compareProfiles(const traces::ProfileReader& a, const traces::ProfileReader& b);

// {"profile", "simulated_cycles", "simulated_seconds", "ipu_waiting_for_host", "engine_runs", "steps", "steps_per_run",
//  "throughput_steps_per_second", "proportions": {...}, "overlap_percent",
//  "bytes_to_device", "bytes_to_host", ...}
nlohmann::json figuresToJson(const ProfileFigures& figures);
// {"a": {...}, "b": {...}, "speedup": x}
nlohmann::json comparisonToJson(const Comparison& comparison);
void printComparison(const Comparison& comparison, std::ostream& out);

}  // namespace ipusim::profiler::analysis
