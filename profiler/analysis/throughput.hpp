#pragma once
// Throughput, one definition for `ipusim run`, `compare` and every output:
// training steps per simulated second, examples per simulated second (steps
// x the examples a step trains: batch size x replicas), and examples per
// second per IPU (over every IPU of the job, as Graphcore reports images/s
// per IPU). 0 when no simulated time passed.
#include <cstdint>

namespace ipusim::profiler::analysis {

inline double stepsPerSecond(std::uint64_t steps, double simulatedSeconds) {
  return simulatedSeconds > 0 ? double(steps) / simulatedSeconds : 0.0;
}

inline double examplesPerSecond(std::uint64_t steps, std::uint64_t examplesPerStep, double simulatedSeconds) {
  return stepsPerSecond(steps, simulatedSeconds) * double(examplesPerStep);
}

inline double examplesPerSecondPerIpu(std::uint64_t steps, std::uint64_t examplesPerStep, double simulatedSeconds,
                                      std::uint32_t ipus) {
  return ipus ? examplesPerSecond(steps, examplesPerStep, simulatedSeconds) / double(ipus) : 0.0;
}

}  // namespace ipusim::profiler::analysis
