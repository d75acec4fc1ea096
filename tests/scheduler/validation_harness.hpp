#pragma once
// Test harness for fit with validation (scheduler::ValidationSpec): compiles
// the workload, and runs its "train" and "validation" entry points in the
// order Keras's fit runs them (an epoch of training runs, then after every
// validation_freq-th epoch a validation's runs), fed from the dataset
// (shuffled) and the validation data (in order, from its first batch at
// each validation); the CPU reference trains on the same batches and
// evaluates (CpuReference::evaluate) on the same validation batches at the
// same points. One replica (sharded or pipelined: with a pipeline's
// gradient accumulation the reference trains on the N mini-batches at once,
// one loss per update). One simulation per process.
#include "scheduler/compiler.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::testing {

struct ValidationResults {
  scheduler::CompiledWorkload compiled;
  std::vector<float> simulatedLoss, referenceLoss;  // each training step's (the reference's: each update's)
  // Each validation step's loss and accuracy, validation after validation.
  std::vector<float> simulatedValLoss, referenceValLoss, simulatedValAccuracy, referenceValAccuracy;
  std::vector<std::string> entries;  // the entry point of each Engine::run, in order
};

ValidationResults runFitWithValidation(const scheduler::Workload& w);

}  // namespace ipusim::testing
