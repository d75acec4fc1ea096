#include "cpu_reference.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::testing {

CpuReference::CpuReference(const scheduler::Workload& w, std::vector<std::vector<float>> weights)
    : weights_(std::move(weights)), batch_(w.dataset.batchSize), learningRate_(float(w.optimizer.learningRate)) {
  std::uint64_t in = w.dataset.features;
  for (const auto& l : w.layers) {
    if (l.kind != "dense") continue;
    layers_.push_back({in, l.units, l.activation == scheduler::Activation::Relu});
    in = l.units;
  }
}

float CpuReference::step(const std::vector<float>& images, const std::vector<std::int32_t>& labels) {
  const std::size_t B = batch_, L = layers_.size();
  // Forward: acts[0] = input, acts[i+1] = output of layer i.
  std::vector<std::vector<float>> acts{images};
  for (std::size_t i = 0; i < L; ++i) {
    const auto& [in, out, relu] = layers_[i];
    const auto& W = weights_[2 * i];
    const auto& b = weights_[2 * i + 1];
    std::vector<float> y(B * out);
    for (std::size_t r = 0; r < B; ++r)
      for (std::size_t c = 0; c < out; ++c) {
        double s = 0;
        for (std::size_t k = 0; k < in; ++k) s += double(acts[i][r * in + k]) * W[k * out + c];
        float v = float(s) + b[c];
        y[r * out + c] = relu ? std::max(v, 0.0f) : v;
      }
    acts.push_back(std::move(y));
  }
  // Softmax cross-entropy and its gradient (mean over the batch).
  const std::size_t C = layers_.back().out;
  std::vector<float> grad(B * C);
  double lossSum = 0;
  for (std::size_t r = 0; r < B; ++r) {
    const float* z = &acts[L][r * C];
    const float mx = *std::max_element(z, z + C);
    double sum = 0;
    for (std::size_t c = 0; c < C; ++c) sum += std::exp(double(z[c] - mx));
    for (std::size_t c = 0; c < C; ++c) {
      const double p = std::exp(double(z[c] - mx)) / sum;
      grad[r * C + c] = float((p - (int(c) == labels[r] ? 1.0 : 0.0)) / double(B));
      if (int(c) == labels[r]) lossSum += -std::log(p);
    }
  }
  // Backward and SGD.
  std::vector<std::vector<float>> newWeights = weights_;
  for (std::size_t i = L; i-- > 0;) {
    const auto& [in, out, relu] = layers_[i];
    if (relu)
      for (std::size_t e = 0; e < B * out; ++e) if (!(acts[i + 1][e] > 0)) grad[e] = 0;
    const auto& W = weights_[2 * i];
    for (std::size_t k = 0; k < in; ++k)
      for (std::size_t c = 0; c < out; ++c) {
        double s = 0;
        for (std::size_t r = 0; r < B; ++r) s += double(acts[i][r * in + k]) * grad[r * out + c];
        newWeights[2 * i][k * out + c] = W[k * out + c] - learningRate_ * float(s);
      }
    for (std::size_t c = 0; c < out; ++c) {
      double s = 0;
      for (std::size_t r = 0; r < B; ++r) s += grad[r * out + c];
      newWeights[2 * i + 1][c] = weights_[2 * i + 1][c] - learningRate_ * float(s);
    }
    if (i > 0) {
      std::vector<float> gin(B * in);
      for (std::size_t r = 0; r < B; ++r)
        for (std::size_t k = 0; k < in; ++k) {
          double s = 0;
          for (std::size_t c = 0; c < out; ++c) s += double(grad[r * out + c]) * W[k * out + c];
          gin[r * in + k] = float(s);
        }
      grad = std::move(gin);
    }
  }
  weights_ = std::move(newWeights);
  return float(lossSum / double(B));
}

}  // namespace ipusim::testing
