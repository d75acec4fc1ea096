#include "cpu_reference_recurrent.hpp"

#include "cpu_reference_activations.hpp"

namespace ipusim::testing {
namespace {

// The step that ran k-th reads the input's step t.
std::uint64_t stepRead(const RecurrentGeometry& g, std::uint64_t k) { return g.goBackwards ? g.steps - 1 - k : k; }

float value(scheduler::Activation a, const scheduler::ActivationParams& p, float x) {
  return a == scheduler::Activation::Linear ? x : float(activationValue(a, p, x));
}
float slope(scheduler::Activation a, const scheduler::ActivationParams& p, float x) {
  return a == scheduler::Activation::Linear ? 1.0f : float(activationSlope(a, p, x));
}

}  // namespace

std::vector<float> recurrentForward(const RecurrentGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                    const std::vector<float>& recurrent, const std::vector<float>& bias, RecurrentCache& cache) {
  const std::uint64_t U = g.units, W = g.gates() * U, F = g.features, T = g.steps;
  cache.z.assign(g.batch * T * W, 0.0f);
  cache.c.assign(g.batch * T * U, 0.0f);
  cache.h.assign(g.batch * T * U, 0.0f);
  std::vector<float> y(g.batch * (g.returnSequences ? T : 1) * U);
  for (std::uint64_t b = 0; b < g.batch; ++b) {
    std::vector<float> h(U, 0.0f), c(U, 0.0f);
    for (std::uint64_t k = 0; k < T; ++k) {
      const float* xt = &x[(b * T + stepRead(g, k)) * F];
      float* z = &cache.z[(b * T + k) * W];
      for (std::uint64_t j = 0; j < W; ++j) {
        double sum = bias.empty() ? 0.0 : bias[j];
        for (std::uint64_t f = 0; f < F; ++f) sum += double(xt[f]) * kernel[f * W + j];
        for (std::uint64_t u = 0; u < U; ++u) sum += double(h[u]) * recurrent[u * W + j];
        z[j] = float(sum);
      }
      for (std::uint64_t u = 0; u < U; ++u) {
        if (!g.lstm) {
          h[u] = value(g.activation, g.params, z[u]);
          continue;
        }
        const float i = value(g.recurrentActivation, g.recurrentParams, z[u]);
        const float f = value(g.recurrentActivation, g.recurrentParams, z[U + u]);
        const float gg = value(g.activation, g.params, z[2 * U + u]);
        const float o = value(g.recurrentActivation, g.recurrentParams, z[3 * U + u]);
        c[u] = f * c[u] + i * gg;
        h[u] = o * value(g.activation, g.params, c[u]);
      }
      std::copy(c.begin(), c.end(), &cache.c[(b * T + k) * U]);
      std::copy(h.begin(), h.end(), &cache.h[(b * T + k) * U]);
      if (g.returnSequences) std::copy(h.begin(), h.end(), &y[(b * T + k) * U]);
    }
    if (!g.returnSequences) std::copy(h.begin(), h.end(), &y[b * U]);
  }
  return y;
}

RecurrentGrads recurrentBackward(const RecurrentGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                 const std::vector<float>& recurrent, const RecurrentCache& cache,
                                 const std::vector<float>& grad, bool wantInput) {
  const std::uint64_t U = g.units, W = g.gates() * U, F = g.features, T = g.steps;
  std::vector<double> dKernel(F * W, 0.0), dRecurrent(U * W, 0.0), dBias(W, 0.0);
  RecurrentGrads out;
  if (wantInput) out.input.assign(g.batch * T * F, 0.0f);
  for (std::uint64_t b = 0; b < g.batch; ++b) {
    std::vector<float> dhNext(U, 0.0f), dcNext(U, 0.0f), dz(W);
    for (std::uint64_t k = T; k-- > 0;) {
      const float* z = &cache.z[(b * T + k) * W];
      const float* c = &cache.c[(b * T + k) * U];
      const float* hPrev = k ? &cache.h[(b * T + k - 1) * U] : nullptr;
      const float* cPrev = k ? &cache.c[(b * T + k - 1) * U] : nullptr;
      for (std::uint64_t u = 0; u < U; ++u) {
        float dh = dhNext[u];
        if (g.returnSequences) dh += grad[(b * T + k) * U + u];
        else if (k == T - 1) dh += grad[b * U + u];
        if (!g.lstm) {
          dz[u] = dh * slope(g.activation, g.params, z[u]);
          continue;
        }
        const float i = value(g.recurrentActivation, g.recurrentParams, z[u]);
        const float f = value(g.recurrentActivation, g.recurrentParams, z[U + u]);
        const float gg = value(g.activation, g.params, z[2 * U + u]);
        const float o = value(g.recurrentActivation, g.recurrentParams, z[3 * U + u]);
        const float dc = dcNext[u] + dh * o * slope(g.activation, g.params, c[u]);
        const float previous = cPrev ? cPrev[u] : 0.0f;
        dz[u] = dc * gg * slope(g.recurrentActivation, g.recurrentParams, z[u]);
        dz[U + u] = dc * previous * slope(g.recurrentActivation, g.recurrentParams, z[U + u]);
        dz[2 * U + u] = dc * i * slope(g.activation, g.params, z[2 * U + u]);
        dz[3 * U + u] = dh * value(g.activation, g.params, c[u]) * slope(g.recurrentActivation, g.recurrentParams, z[3 * U + u]);
        dcNext[u] = dc * f;
      }
      const float* xt = &x[(b * T + stepRead(g, k)) * F];
      for (std::uint64_t j = 0; j < W; ++j) {
        dBias[j] += dz[j];
        for (std::uint64_t f = 0; f < F; ++f) dKernel[f * W + j] += double(xt[f]) * dz[j];
        if (hPrev)
          for (std::uint64_t u = 0; u < U; ++u) dRecurrent[u * W + j] += double(hPrev[u]) * dz[j];
      }
      for (std::uint64_t u = 0; u < U; ++u) {
        double sum = 0;
        for (std::uint64_t j = 0; j < W; ++j) sum += double(dz[j]) * recurrent[u * W + j];
        dhNext[u] = float(sum);
      }
      if (wantInput)
        for (std::uint64_t f = 0; f < F; ++f) {
          double sum = 0;
          for (std::uint64_t j = 0; j < W; ++j) sum += double(dz[j]) * kernel[f * W + j];
          out.input[(b * T + stepRead(g, k)) * F + f] = float(sum);
        }
    }
  }
  out.kernel.assign(dKernel.begin(), dKernel.end());
  out.recurrent.assign(dRecurrent.begin(), dRecurrent.end());
  if (g.bias) out.bias.assign(dBias.begin(), dBias.end());
  return out;
}

}  // namespace ipusim::testing
