#pragma once
// Test harness: compiles a workload, runs `steps` training steps of it in the
// SystemC model through the Engine (from an SC_THREAD, fed by the dataset's
// BatchSource), and the same steps on the CPU reference. One simulation per
// process: call runTraining once per test.
#include "scheduler/compiler.hpp"

#include <vector>

namespace ipusim::testing {

struct TrainingLosses {
  std::vector<float> simulated, reference;                  // losses per step
  std::vector<float> simulatedAccuracy, referenceAccuracy;  // the accuracy beside each loss
  scheduler::CompiledWorkload compiled;
  std::uint64_t cycles = 0;
};

TrainingLosses runTraining(const scheduler::Workload& w, std::uint64_t steps);

std::string sourcePath(const std::string& relative);  // under IPUSIM_SOURCE_DIR

}  // namespace ipusim::testing
