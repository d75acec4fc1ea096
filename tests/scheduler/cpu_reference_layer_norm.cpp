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

// Element e of example-major values laid out as one row per (example,
// group): the group's values over every position, in order.
struct GroupLayout {
  std::uint64_t positions, channels, groups;
  std::uint64_t perGroup() const { return channels / groups; }
  // The index in the channels-last values of row element i of row r.
  std::uint64_t source(std::uint64_t r, std::uint64_t i) const {
    const std::uint64_t example = r / groups, group = r % groups;
    const std::uint64_t position = i / perGroup(), k = i % perGroup();
    return (example * positions + position) * channels + group * perGroup() + k;
  }
  std::vector<float> toRows(const std::vector<float>& v) const {
    std::vector<float> rows(v.size());
    const std::uint64_t n = positions * perGroup();
    for (std::uint64_t r = 0; r < v.size() / n; ++r)
      for (std::uint64_t i = 0; i < n; ++i) rows[r * n + i] = v[source(r, i)];
    return rows;
  }
  std::vector<float> fromRows(const std::vector<float>& rows) const {
    std::vector<float> v(rows.size());
    const std::uint64_t n = positions * perGroup();
    for (std::uint64_t r = 0; r < rows.size() / n; ++r)
      for (std::uint64_t i = 0; i < n; ++i) v[source(r, i)] = rows[r * n + i];
    return v;
  }
};

}  // namespace

std::vector<float> groupNormForward(const std::vector<float>& x, std::uint64_t positions, std::uint64_t channels,
                                    std::uint64_t groups, double epsilon, const std::vector<float>& gamma,
                                    const std::vector<float>& beta) {
  const GroupLayout at{positions, channels, groups};
  std::vector<float> y = at.fromRows(layerNormForward(at.toRows(x), positions * at.perGroup(), epsilon, {}, {}));
  for (std::size_t e = 0; e < y.size(); ++e)
    y[e] = float(double(y[e]) * (gamma.empty() ? 1.0 : gamma[e % channels]) + (beta.empty() ? 0.0 : beta[e % channels]));
  return y;
}

LayerNormGrads groupNormBackward(const std::vector<float>& x, const std::vector<float>& grad, std::uint64_t positions,
                                 std::uint64_t channels, std::uint64_t groups, double epsilon, const std::vector<float>& gamma) {
  const GroupLayout at{positions, channels, groups};
  const std::uint64_t n = positions * at.perGroup();
  const std::vector<float> whitened = at.fromRows(layerNormForward(at.toRows(x), n, epsilon, {}, {}));
  std::vector<double> dGamma(channels, 0.0), dBeta(channels, 0.0);
  std::vector<float> g(grad.size());
  for (std::size_t e = 0; e < grad.size(); ++e) {
    dGamma[e % channels] += double(grad[e]) * whitened[e];
    dBeta[e % channels] += grad[e];
    g[e] = grad[e] * (gamma.empty() ? 1.0f : gamma[e % channels]);
  }
  LayerNormGrads d;
  d.input = at.fromRows(layerNormBackward(at.toRows(x), at.toRows(g), n, epsilon, {}).input);
  d.gamma.assign(dGamma.begin(), dGamma.end());
  d.beta.assign(dBeta.begin(), dBeta.end());
  return d;
}

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
