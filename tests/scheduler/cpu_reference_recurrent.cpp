#include "cpu_reference_recurrent.hpp"

#include "cpu_reference_activations.hpp"

namespace ipusim::testing {
namespace {

// The step that ran k-th reads the input's step t.
std::uint64_t stepRead(const RecurrentGeometry& g, std::uint64_t k) { return g.goBackwards ? g.steps - 1 - k : k; }
// Whether row b's k-th step is masked (its token id is 0).
bool masked(const RecurrentGeometry& g, const RecurrentCache& cache, std::uint64_t b, std::uint64_t k) {
  return !cache.ids.empty() && cache.ids[b * g.steps + stepRead(g, k)] == 0.0f;
}

float value(scheduler::Activation a, const scheduler::ActivationParams& p, float x) {
  return a == scheduler::Activation::Linear ? x : float(activationValue(a, p, x));
}
float slope(scheduler::Activation a, const scheduler::ActivationParams& p, float x) {
  return a == scheduler::Activation::Linear ? 1.0f : float(activationSlope(a, p, x));
}

// GRU (Keras's GRUCell): one step of row b, from h (updated), the step's
// input xt; z keeps [z, r, h~]'s pre-activations, inner the candidate's recurrent term.
void gruStep(const RecurrentGeometry& g, const float* xt, const std::vector<float>& kernel,
             const std::vector<float>& recurrent, const std::vector<float>& bias, std::vector<float>& h, float* z,
             float* inner) {
  const std::uint64_t U = g.units, W = 3 * U, F = g.features;
  std::vector<double> mx(W), mi(W, 0.0);
  for (std::uint64_t j = 0; j < W; ++j) {
    double sum = bias.empty() ? 0.0 : bias[j];
    for (std::uint64_t f = 0; f < F; ++f) sum += double(xt[f]) * kernel[f * W + j];
    mx[j] = float(sum);
  }
  const std::uint64_t recurrentColumns = g.resetAfter ? W : 2 * U;
  for (std::uint64_t j = 0; j < recurrentColumns; ++j) {
    double sum = g.resetAfter && !bias.empty() ? bias[W + j] : 0.0;
    for (std::uint64_t u = 0; u < U; ++u) sum += double(h[u]) * recurrent[u * W + j];
    mi[j] = float(sum);
  }
  std::vector<float> r(U), zGate(U);
  for (std::uint64_t u = 0; u < U; ++u) {
    z[u] = float(mx[u] + mi[u]);
    z[U + u] = float(mx[U + u] + mi[U + u]);
    zGate[u] = value(g.recurrentActivation, g.recurrentParams, z[u]);
    r[u] = value(g.recurrentActivation, g.recurrentParams, z[U + u]);
  }
  for (std::uint64_t u = 0; u < U; ++u) {
    if (g.resetAfter) {
      inner[u] = float(mi[2 * U + u]);
      z[2 * U + u] = float(mx[2 * U + u] + r[u] * inner[u]);
    } else {
      double sum = 0;
      for (std::uint64_t v = 0; v < U; ++v) sum += double(r[v] * h[v]) * recurrent[v * W + 2 * U + u];
      inner[u] = float(sum);
      z[2 * U + u] = float(mx[2 * U + u] + sum);
    }
  }
  for (std::uint64_t u = 0; u < U; ++u) {
    const float hh = value(g.activation, g.params, z[2 * U + u]);
    h[u] = zGate[u] * h[u] + (1.0f - zGate[u]) * hh;
  }
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
      if (masked(g, cache, b, k)) {  // the states carried over
        std::copy(c.begin(), c.end(), &cache.c[(b * T + k) * U]);
        std::copy(h.begin(), h.end(), &cache.h[(b * T + k) * U]);
        if (g.returnSequences && !g.zeroOutputForMask) std::copy(h.begin(), h.end(), &y[(b * T + k) * U]);
        continue;  // (zeros with zeroOutputForMask: y starts at 0)
      }
      const float* xt = &x[(b * T + stepRead(g, k)) * F];
      float* z = &cache.z[(b * T + k) * W];
      if (g.gru) {
        gruStep(g, xt, kernel, recurrent, bias, h, z, &cache.c[(b * T + k) * U]);
        std::copy(h.begin(), h.end(), &cache.h[(b * T + k) * U]);
        if (g.returnSequences) std::copy(h.begin(), h.end(), &y[(b * T + k) * U]);
        continue;
      }
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
  std::vector<double> dKernel(F * W, 0.0), dRecurrent(U * W, 0.0), dBias((g.gru && g.resetAfter ? 2 : 1) * W, 0.0);
  RecurrentGrads out;
  if (wantInput) out.input.assign(g.batch * T * F, 0.0f);
  for (std::uint64_t b = 0; b < g.batch; ++b) {
    std::vector<float> dhNext(U, 0.0f), dcNext(U, 0.0f), dz(W);
    for (std::uint64_t k = T; k-- > 0;) {
      if (masked(g, cache, b, k)) {  // the carried states pass their gradient on; the cell gets none
        for (std::uint64_t u = 0; u < U; ++u) {
          if (g.returnSequences && !g.zeroOutputForMask) dhNext[u] += grad[(b * T + k) * U + u];
          else if (!g.returnSequences && k == T - 1) dhNext[u] += grad[b * U + u];
        }
        continue;
      }
      const float* z = &cache.z[(b * T + k) * W];
      if (g.gru) {  // dz: the input projection's gradient [z, r, h~]; dhNext gets h's own terms first
        const float* inner = &cache.c[(b * T + k) * U];
        const std::vector<float> zero(U, 0.0f);
        const float* hPrev = k ? &cache.h[(b * T + k - 1) * U] : zero.data();
        std::vector<float> dInner(W, 0.0f), dh(U);
        for (std::uint64_t u = 0; u < U; ++u) {
          dh[u] = dhNext[u] + (g.returnSequences ? grad[(b * T + k) * U + u] : k == T - 1 ? grad[b * U + u] : 0.0f);
          const float zg = value(g.recurrentActivation, g.recurrentParams, z[u]);
          const float hh = value(g.activation, g.params, z[2 * U + u]);
          const float dIn = dh[u] * (1.0f - zg) * slope(g.activation, g.params, z[2 * U + u]);
          dz[u] = dh[u] * (hPrev[u] - hh) * slope(g.recurrentActivation, g.recurrentParams, z[u]);
          dz[2 * U + u] = dIn;
          dhNext[u] = dh[u] * zg;
        }
        std::vector<float> dr(U);
        if (g.resetAfter) {
          for (std::uint64_t u = 0; u < U; ++u) {
            const float r = value(g.recurrentActivation, g.recurrentParams, z[U + u]);
            dr[u] = dz[2 * U + u] * inner[u];
            dInner[2 * U + u] = dz[2 * U + u] * r;
          }
        } else {  // the candidate's (r h) U_h
          for (std::uint64_t v = 0; v < U; ++v) {
            const float r = value(g.recurrentActivation, g.recurrentParams, z[U + v]);
            double dRh = 0;
            for (std::uint64_t u = 0; u < U; ++u) {
              dRh += double(dz[2 * U + u]) * recurrent[v * W + 2 * U + u];
              dRecurrent[v * W + 2 * U + u] += double(r * hPrev[v]) * dz[2 * U + u];
            }
            dr[v] = float(dRh) * hPrev[v];
            dhNext[v] += float(dRh) * r;
          }
        }
        for (std::uint64_t u = 0; u < U; ++u) {
          dz[U + u] = dr[u] * slope(g.recurrentActivation, g.recurrentParams, z[U + u]);
          dInner[u] = dz[u], dInner[U + u] = dz[U + u];
        }
        const std::uint64_t innerColumns = g.resetAfter ? W : 2 * U;
        for (std::uint64_t j = 0; j < innerColumns; ++j) {
          if (g.resetAfter) dBias[W + j] += dInner[j];
          for (std::uint64_t u = 0; u < U; ++u) dRecurrent[u * W + j] += double(hPrev[u]) * dInner[j];
        }
        for (std::uint64_t u = 0; u < U; ++u) {
          double sum = 0;
          for (std::uint64_t j = 0; j < innerColumns; ++j) sum += double(dInner[j]) * recurrent[u * W + j];
          dhNext[u] += float(sum);
        }
        const float* xt = &x[(b * T + stepRead(g, k)) * F];
        for (std::uint64_t j = 0; j < W; ++j) {
          dBias[j] += dz[j];
          for (std::uint64_t f = 0; f < F; ++f) dKernel[f * W + j] += double(xt[f]) * dz[j];
        }
        if (wantInput)
          for (std::uint64_t f = 0; f < F; ++f) {
            double sum = 0;
            for (std::uint64_t j = 0; j < W; ++j) sum += double(dz[j]) * kernel[f * W + j];
            out.input[(b * T + stepRead(g, k)) * F + f] = float(sum);
          }
        continue;
      }
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
