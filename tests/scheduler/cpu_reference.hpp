#pragma once
// A straightforward CPU trainer for the acceptance tests: plain loops over
// the same model (flatten/reshape, dense with or without bias, conv2d with or
// without bias, max and average pooling (cpu_reference_spatial.hpp), relu /
// sigmoid / tanh / gelu activations and layers, dropout with the device's
// masks, batch normalization in training (Keras's arithmetic: two-pass batch
// statistics, the full gradient through them, moving averages), softmax cross-entropy from logits or fused with a last softmax)
// and the same optimizer (SGD, momentum, nesterov, Adam, RMSprop, centered),
// starting from the initial weights the compiled executable holds, fed the
// same batches. Float arithmetic, double accumulators.
#include "cpu_reference_spatial.hpp"
#include "scheduler/workload.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::testing {

class CpuReference {
 public:
  // `weights`: per dense (conv2d) layer its kernel (in x out; HWIO) and, with a bias, the bias (out); per
  // batch normalization layer its gamma (with scale) and beta (with center); in layer order.
  CpuReference(const scheduler::Workload& w, std::vector<std::vector<float>> weights);
  // One training step on a batch; returns the batch mean cross-entropy before the update.
  float step(const std::vector<float>& images, const std::vector<std::int32_t>& labels);
  const std::vector<std::vector<float>>& weights() const { return weights_; }
  // The last step's accuracy: the share of rows whose first largest logit is the label's.
  float lastAccuracy() const { return lastAccuracy_; }
  // Per batch normalization layer, in layer order: its moving mean, then its moving variance.
  const std::vector<std::vector<float>>& movingStatistics() const { return moving_; }

 private:
  struct Stage {
    enum Kind { Dense, Conv, Pool, Activation, Dropout, BatchNorm } kind;
    std::uint64_t in = 0, out = 0;  // elements per example
    std::size_t kernel = 0;         // Dense, Conv: index in weights_
    SpatialGeometry geometry{};     // Conv, Pool
    bool max = false;               // Pool: max (else average)
    bool bias = false;
    scheduler::Activation activation = scheduler::Activation::Linear;
    float rate = 0;
    std::uint64_t seed = 0;
    // BatchNorm: channels (the last axis), Keras's momentum and epsilon, its
    // weights' indices (npos without scale / center), its moving statistics' in moving_.
    std::uint64_t channels = 0;
    double momentum = 0, epsilon = 0;
    std::size_t gamma = ~std::size_t(0), beta = ~std::size_t(0), moving = 0;
  };
  // Batch normalization's per-channel batch mean and biased variance of `x` (two passes, double).
  void batchStatistics(const Stage& s, const std::vector<float>& x, std::vector<double>& mean,
                       std::vector<double>& variance) const;
  void update(std::size_t weight, const std::vector<float>& grad);

  scheduler::Workload w_;
  std::vector<Stage> stages_;
  std::vector<std::vector<float>> weights_;
  std::vector<std::vector<std::vector<float>>> slots_;  // per weight: the optimizer's slot variables
  std::vector<std::vector<float>> moving_;
  std::uint32_t batch_;
  std::uint64_t stepCount_ = 0;
  float lastAccuracy_ = 0;
};

}  // namespace ipusim::testing
