#pragma once
// A straightforward CPU trainer for the acceptance tests: plain loops over
// the same model (flatten/reshape, dense with or without bias, relu /
// sigmoid / tanh / gelu activations and layers, dropout with the device's
// masks, softmax cross-entropy from logits or fused with a last softmax)
// and the same optimizer (SGD, momentum, nesterov, Adam, RMSprop, centered),
// starting from the initial weights the compiled executable holds, fed the
// same batches. Float arithmetic, double accumulators.
#include "scheduler/workload.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::testing {

class CpuReference {
 public:
  // `weights`: per dense layer its kernel (in x out) and, with a bias, the bias (out), in layer order.
  CpuReference(const scheduler::Workload& w, std::vector<std::vector<float>> weights);
  // One training step on a batch; returns the batch mean cross-entropy before the update.
  float step(const std::vector<float>& images, const std::vector<std::int32_t>& labels);
  const std::vector<std::vector<float>>& weights() const { return weights_; }
  // The last step's accuracy: the share of rows whose first largest logit is the label's.
  float lastAccuracy() const { return lastAccuracy_; }

 private:
  struct Stage {
    enum Kind { Dense, Activation, Dropout } kind;
    std::uint64_t in = 0, out = 0;  // features
    std::size_t kernel = 0;         // Dense: index in weights_
    bool bias = false;
    scheduler::Activation activation = scheduler::Activation::Linear;
    float rate = 0;
    std::uint64_t seed = 0;
  };
  void update(std::size_t weight, const std::vector<float>& grad);

  scheduler::Workload w_;
  std::vector<Stage> stages_;
  std::vector<std::vector<float>> weights_;
  std::vector<std::vector<std::vector<float>>> slots_;  // per weight: the optimizer's slot variables
  std::uint32_t batch_;
  std::uint64_t stepCount_ = 0;
  float lastAccuracy_ = 0;
};

}  // namespace ipusim::testing
