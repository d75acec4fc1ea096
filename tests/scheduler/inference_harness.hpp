#pragma once
// Test harness for evaluate and predict (scheduler::Task): compiles a
// workload for its task, runs `steps` batches of it in the SystemC model
// through the Engine, fed in the dataset's order (evaluate and predict do not
// shuffle), and the same batches on the CPU reference (CpuReference::evaluate,
// ::predict) from the same initial weights. One replica. One simulation per
// process: call runInference once per test. (A replica may span IPUs: sharded or pipelined.)
#include "scheduler/compiler.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::testing {

struct InferenceResults {
  scheduler::CompiledWorkload compiled;
  // Evaluate: each batch's loss and accuracy.
  std::vector<float> simulatedLoss, referenceLoss, simulatedAccuracy, referenceAccuracy;
  // Predict: every row of every batch, CompiledWorkload::predictionWidth values each.
  std::vector<float> simulatedPredictions, referencePredictions;
};

InferenceResults runInference(const scheduler::Workload& w, std::uint64_t steps);

}  // namespace ipusim::testing
