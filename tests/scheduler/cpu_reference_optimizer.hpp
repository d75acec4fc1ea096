#pragma once
// The CPU reference's optimizer (cpu_reference.hpp): Keras 3's rules written
// out again from keras/src/optimizers/*.py, independently of the device's
// codelets: the learning rate (a number or a schedule at Keras's iteration,
// 0 on the first step), gradient clipping (clipnorm, clipvalue,
// global_clipnorm), decoupled weight decay, then the update rule (SGD with
// momentum and nesterov, Adam, AdamW, RMSprop with centered and momentum,
// Adagrad, Adamax, Nadam). Float updates, double accumulators and scalars.
#include "scheduler/models/optimizer_spec.hpp"

#include <cstdint>
#include <map>
#include <vector>

namespace ipusim::testing {

// Keras's schedule `s` at iteration `iteration` (double arithmetic).
double scheduledLearningRate(const scheduler::LearningRateSchedule& s, std::uint64_t iteration);

class CpuOptimizer {
 public:
  CpuOptimizer(scheduler::OptimizerSpec spec, const std::vector<std::vector<float>>& weights);
  // One training step: every weight's gradient (by index into `weights`).
  void apply(std::vector<std::vector<float>>& weights, std::map<std::size_t, std::vector<float>> grads);
  // The learning rate of the last step applied.
  double learningRate() const { return learningRate_; }

 private:
  void update(std::vector<float>& w, std::vector<std::vector<float>>& s, const std::vector<float>& g, double lr) const;

  scheduler::OptimizerSpec o_;
  std::vector<std::vector<std::vector<float>>> slots_;  // per weight
  std::uint64_t iterations_ = 0;                        // Keras's optimizer.iterations before the step
  double product_ = 1;                                  // Nadam's product of momentum factors
  double learningRate_ = 0;
};

}  // namespace ipusim::testing
