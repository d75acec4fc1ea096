#include "cpu_reference_attention.hpp"

#include "cpu_reference_activations.hpp"
#include "model/numeric/dropout_mask.hpp"

#include <cmath>

namespace ipusim::testing {
namespace {

// y [rows, n] = x [rows, k] . W [k, n] (+ bias), as the Dense stage computes it.
std::vector<float> project(const std::vector<float>& x, std::uint64_t rows, std::uint64_t k, std::uint64_t n,
                           const std::vector<float>& W, const std::vector<float>* bias) {
  std::vector<float> y(rows * n);
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t c = 0; c < n; ++c) {
      double sum = 0;
      for (std::uint64_t p = 0; p < k; ++p) sum += double(x[r * k + p]) * W[p * n + c];
      y[r * n + c] = float(sum) + (bias ? (*bias)[c] : 0.0f);
    }
  return y;
}

struct ProjectionGrads {
  std::vector<float> kernel, bias, input;
};
ProjectionGrads projectBack(const std::vector<float>& x, std::uint64_t rows, std::uint64_t k, std::uint64_t n,
                            const std::vector<float>& W, const std::vector<float>& dy) {
  ProjectionGrads d{std::vector<float>(k * n), std::vector<float>(n), std::vector<float>(rows * k)};
  for (std::uint64_t p = 0; p < k; ++p)
    for (std::uint64_t c = 0; c < n; ++c) {
      double sum = 0;
      for (std::uint64_t r = 0; r < rows; ++r) sum += double(x[r * k + p]) * dy[r * n + c];
      d.kernel[p * n + c] = float(sum);
    }
  for (std::uint64_t c = 0; c < n; ++c) {
    double sum = 0;
    for (std::uint64_t r = 0; r < rows; ++r) sum += dy[r * n + c];
    d.bias[c] = float(sum);
  }
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t p = 0; p < k; ++p) {
      double sum = 0;
      for (std::uint64_t c = 0; c < n; ++c) sum += double(dy[r * n + c]) * W[p * n + c];
      d.input[r * k + p] = float(sum);
    }
  return d;
}

// The weights of projection `part` (0 query, 1 key, 2 value, 3 output).
const std::vector<float>& kernelOf(const AttentionGeometry& g, const AttentionWeights& w, int part) {
  return *w.at(std::size_t(part) * (g.bias ? 2 : 1));
}
const std::vector<float>* biasOf(const AttentionGeometry& g, const AttentionWeights& w, int part) {
  return g.bias ? w.at(std::size_t(part) * 2 + 1) : nullptr;
}

float inverseSqrtKeyDim(const AttentionGeometry& g) { return float(1.0 / std::sqrt(double(g.keyDim))); }

}  // namespace

std::vector<float> attentionForward(const AttentionGeometry& g, const std::vector<float>& query,
                                    const std::vector<float>& value, const std::vector<float>& key,
                                    const AttentionWeights& w, std::uint64_t step, const std::vector<float>& ids,
                                    AttentionCache& c) {
  const std::uint64_t B = g.batch, Tq = g.querySteps, Tv = g.valueSteps, H = g.heads, dk = g.keyDim, dv = g.valueDim;
  c.q = project(query, B * Tq, g.queryFeatures, H * dk, kernelOf(g, w, 0), biasOf(g, w, 0));
  c.k = project(key, B * Tv, g.keyFeatures, H * dk, kernelOf(g, w, 1), biasOf(g, w, 1));
  c.v = project(value, B * Tv, g.valueFeatures, H * dv, kernelOf(g, w, 2), biasOf(g, w, 2));
  const float scale = inverseSqrtKeyDim(g);
  for (float& x : c.q) x = x * scale;
  std::vector<float> scores(B * H * Tq * Tv);
  for (std::uint64_t b = 0; b < B; ++b)
    for (std::uint64_t h = 0; h < H; ++h)
      for (std::uint64_t i = 0; i < Tq; ++i)
        for (std::uint64_t j = 0; j < Tv; ++j) {
          double sum = 0;
          for (std::uint64_t d = 0; d < dk; ++d)
            sum += double(c.q[(b * Tq + i) * H * dk + h * dk + d]) * c.k[(b * Tv + j) * H * dk + h * dk + d];
          float s = float(sum);
          // Keras's attention mask: the masks ANDed, then Softmax's adder where it hides the key.
          const std::uint64_t steps = ids.empty() ? 0 : ids.size() / B;
          const bool kept = (!g.causal || j <= i) && (!g.queryMasked || ids[b * steps + i] != 0) &&
                            (!g.valueMasked || ids[b * steps + j] != 0);
          if (!kept) s += -1e9f;
          scores[((b * H + h) * Tq + i) * Tv + j] = s;
        }
  c.probs = softmaxForward(scores, Tv, 1);
  c.dropped = c.probs;
  if (g.dropout > 0) {
    const float keep = 1.0f / (1.0f - g.dropout);
    for (std::size_t e = 0; e < c.dropped.size(); ++e)
      c.dropped[e] = numeric::dropoutKeeps(g.seed, step, e, g.dropout) ? c.probs[e] * keep : 0.0f;
  }
  c.context.assign(B * Tq * H * dv, 0.0f);
  for (std::uint64_t b = 0; b < B; ++b)
    for (std::uint64_t h = 0; h < H; ++h)
      for (std::uint64_t i = 0; i < Tq; ++i)
        for (std::uint64_t e = 0; e < dv; ++e) {
          double sum = 0;
          for (std::uint64_t j = 0; j < Tv; ++j)
            sum += double(c.dropped[((b * H + h) * Tq + i) * Tv + j]) * c.v[(b * Tv + j) * H * dv + h * dv + e];
          c.context[(b * Tq + i) * H * dv + h * dv + e] = float(sum);
        }
  return project(c.context, B * Tq, H * dv, g.units, kernelOf(g, w, 3), biasOf(g, w, 3));
}

AttentionGrads attentionBackward(const AttentionGeometry& g, const std::vector<float>& query,
                                 const std::vector<float>& value, const std::vector<float>& key,
                                 const AttentionWeights& w, std::uint64_t step, const AttentionCache& c,
                                 const std::vector<float>& grad) {
  const std::uint64_t B = g.batch, Tq = g.querySteps, Tv = g.valueSteps, H = g.heads, dk = g.keyDim, dv = g.valueDim;
  const ProjectionGrads out = projectBack(c.context, B * Tq, H * dv, g.units, kernelOf(g, w, 3), grad);
  const std::vector<float>& dContext = out.input;
  std::vector<float> dDropped(B * H * Tq * Tv), dV(B * Tv * H * dv);
  for (std::uint64_t b = 0; b < B; ++b)
    for (std::uint64_t h = 0; h < H; ++h) {
      for (std::uint64_t i = 0; i < Tq; ++i)
        for (std::uint64_t j = 0; j < Tv; ++j) {
          double sum = 0;
          for (std::uint64_t e = 0; e < dv; ++e)
            sum += double(dContext[(b * Tq + i) * H * dv + h * dv + e]) * c.v[(b * Tv + j) * H * dv + h * dv + e];
          dDropped[((b * H + h) * Tq + i) * Tv + j] = float(sum);
        }
      for (std::uint64_t j = 0; j < Tv; ++j)
        for (std::uint64_t e = 0; e < dv; ++e) {
          double sum = 0;
          for (std::uint64_t i = 0; i < Tq; ++i)
            sum += double(c.dropped[((b * H + h) * Tq + i) * Tv + j]) * dContext[(b * Tq + i) * H * dv + h * dv + e];
          dV[(b * Tv + j) * H * dv + h * dv + e] = float(sum);
        }
    }
  std::vector<float> dProbs = dDropped;
  if (g.dropout > 0) {
    const float keep = 1.0f / (1.0f - g.dropout);
    for (std::size_t e = 0; e < dProbs.size(); ++e)
      dProbs[e] = numeric::dropoutKeeps(g.seed, step, e, g.dropout) ? dDropped[e] * keep : 0.0f;
  }
  const std::vector<float> dScores = softmaxBackward(c.probs, dProbs, Tv, 1);  // the mask adds a constant: no gradient
  std::vector<float> dQ(B * Tq * H * dk), dK(B * Tv * H * dk);
  const float scale = inverseSqrtKeyDim(g);
  for (std::uint64_t b = 0; b < B; ++b)
    for (std::uint64_t h = 0; h < H; ++h) {
      for (std::uint64_t i = 0; i < Tq; ++i)
        for (std::uint64_t d = 0; d < dk; ++d) {
          double sum = 0;
          for (std::uint64_t j = 0; j < Tv; ++j)
            sum += double(dScores[((b * H + h) * Tq + i) * Tv + j]) * c.k[(b * Tv + j) * H * dk + h * dk + d];
          dQ[(b * Tq + i) * H * dk + h * dk + d] = float(sum) * scale;  // through the query's scaling
        }
      for (std::uint64_t j = 0; j < Tv; ++j)
        for (std::uint64_t d = 0; d < dk; ++d) {
          double sum = 0;
          for (std::uint64_t i = 0; i < Tq; ++i)
            sum += double(dScores[((b * H + h) * Tq + i) * Tv + j]) * c.q[(b * Tq + i) * H * dk + h * dk + d];
          dK[(b * Tv + j) * H * dk + h * dk + d] = float(sum);
        }
    }
  const ProjectionGrads pq = projectBack(query, B * Tq, g.queryFeatures, H * dk, kernelOf(g, w, 0), dQ);
  const ProjectionGrads pk = projectBack(key, B * Tv, g.keyFeatures, H * dk, kernelOf(g, w, 1), dK);
  const ProjectionGrads pv = projectBack(value, B * Tv, g.valueFeatures, H * dv, kernelOf(g, w, 2), dV);
  AttentionGrads d;
  for (const ProjectionGrads* p : {&pq, &pk, &pv, &out}) {
    d.weights.push_back(p->kernel);
    if (g.bias) d.weights.push_back(p->bias);
  }
  d.query = pq.input, d.key = pk.input, d.value = pv.input;
  return d;
}

}  // namespace ipusim::testing
