#include "cpu_reference_layer_norm.hpp"

#include <cmath>

namespace ipusim::testing {
namespace {

// Per row: the mean and r = 1 / sqrt(variance + epsilon), the variance biased (two passes).
void rowStatistics(const float* x, std::uint64_t n, double epsilon, double& mean, double& r) {
  double sum = 0, squares = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += x[i];
  mean = sum / double(n);
  for (std::uint64_t i = 0; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
  r = 1.0 / std::sqrt(squares / double(n) + epsilon);
}

}  // namespace

std::vector<float> layerNormForward(const std::vector<float>& x, std::uint64_t n, double epsilon,
                                    const std::vector<float>& gamma, const std::vector<float>& beta) {
  std::vector<float> y(x.size());
  for (std::uint64_t at = 0; at < x.size(); at += n) {
    double mean, r;
    rowStatistics(&x[at], n, epsilon, mean, r);
    for (std::uint64_t i = 0; i < n; ++i)
      y[at + i] = float((x[at + i] - mean) * r * (gamma.empty() ? 1.0 : gamma[i]) + (beta.empty() ? 0.0 : beta[i]));
  }
  return y;
}

// With xhat = (x - mean) r over a row of n: dgamma = sum_rows(dy xhat),
// dbeta = sum_rows(dy); g = dy gamma, dx = r (g - mean(g) - xhat mean(g xhat)).
LayerNormGrads layerNormBackward(const std::vector<float>& x, const std::vector<float>& grad, std::uint64_t n,
                                 double epsilon, const std::vector<float>& gamma) {
  std::vector<double> dGamma(n, 0.0), dBeta(n, 0.0), xhat(n), g(n);
  LayerNormGrads d;
  d.input.resize(x.size());
  for (std::uint64_t at = 0; at < x.size(); at += n) {
    double mean, r, sumG = 0, sumGX = 0;
    rowStatistics(&x[at], n, epsilon, mean, r);
    for (std::uint64_t i = 0; i < n; ++i) {
      xhat[i] = (x[at + i] - mean) * r;
      dGamma[i] += grad[at + i] * xhat[i];
      dBeta[i] += grad[at + i];
      g[i] = grad[at + i] * (gamma.empty() ? 1.0 : gamma[i]);
      sumG += g[i];
      sumGX += g[i] * xhat[i];
    }
    for (std::uint64_t i = 0; i < n; ++i) d.input[at + i] = float(r * (g[i] - sumG / double(n) - xhat[i] * sumGX / double(n)));
  }
  d.gamma.assign(dGamma.begin(), dGamma.end());
  d.beta.assign(dBeta.begin(), dBeta.end());
  return d;
}

}  // namespace ipusim::testing
