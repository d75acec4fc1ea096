#pragma once
// A straightforward CPU trainer for the acceptance tests: plain loops over
// the same model (dense layers, relu, softmax cross-entropy, SGD), starting
// from the initial weights the compiled executable holds, fed the same
// batches. Float arithmetic, double accumulators.
#include "scheduler/workload.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::testing {

class CpuReference {
 public:
  // `weights`: kernel (in x out), bias (out) per dense layer, in layer order.
  CpuReference(const scheduler::Workload& w, std::vector<std::vector<float>> weights);
  // One SGD step on a batch; returns the batch mean cross-entropy before the update.
  float step(const std::vector<float>& images, const std::vector<std::int32_t>& labels);
  const std::vector<std::vector<float>>& weights() const { return weights_; }

 private:
  struct Layer { std::uint64_t in, out; bool relu; };
  std::vector<Layer> layers_;
  std::vector<std::vector<float>> weights_;
  std::uint32_t batch_;
  float learningRate_;
};

}  // namespace ipusim::testing
