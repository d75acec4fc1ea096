#pragma once
// The CPU reference's multi-head attention, as Keras 3's MultiHeadAttention
// computes it, written out head by head: the query, key and value
// projections, the query scaled by 1 / sqrt(key_dim), scores, Keras's
// attention mask adder (-1e9 where the causal or the ids' masks hide a key), softmax over the keys, the attention dropout with the
// device's masks, the weighted values and the output projection; and every
// gradient back through them. Float values, double sums.
#include <cstdint>
#include <vector>

namespace ipusim::testing {

struct AttentionGeometry {
  std::uint64_t batch = 0, querySteps = 0, valueSteps = 0;
  std::uint64_t queryFeatures = 0, valueFeatures = 0, keyFeatures = 0;
  std::uint64_t heads = 0, keyDim = 0, valueDim = 0, units = 0;
  bool bias = true, causal = false;
  // Keras's masks (an Embedding's mask_zero): the query's over the rows, the
  // value's (or key's) over the keys, from the token ids given to the forward pass.
  bool queryMasked = false, valueMasked = false;
  float dropout = 0;
  std::uint64_t seed = 0;
};

// The weights in the compiler's order: query, key, value and output kernels
// ([in, heads x dim], the output's [heads x value_dim, units]), each followed
// by its bias when `bias`.
using AttentionWeights = std::vector<const std::vector<float>*>;

// What the backward pass reads: the projections (q already scaled), the
// probabilities before and after dropout, and the context.
struct AttentionCache {
  std::vector<float> q, k, v, probs, dropped, context;
};

// query [batch, Tq, Dq], value [batch, Tv, Dv], key [batch, Tv, Dk]; `step`
// numbers the dropout's masks; `ids` [batch, steps] the token ids of the
// masks (empty without). Returns [batch, Tq, units].
std::vector<float> attentionForward(const AttentionGeometry& g, const std::vector<float>& query,
                                    const std::vector<float>& value, const std::vector<float>& key,
                                    const AttentionWeights& w, std::uint64_t step, const std::vector<float>& ids,
                                    AttentionCache& cache);

struct AttentionGrads {
  std::vector<std::vector<float>> weights;  // in AttentionWeights' order
  std::vector<float> query, value, key;
};
AttentionGrads attentionBackward(const AttentionGeometry& g, const std::vector<float>& query,
                                 const std::vector<float>& value, const std::vector<float>& key,
                                 const AttentionWeights& w, std::uint64_t step, const AttentionCache& cache,
                                 const std::vector<float>& grad);

}  // namespace ipusim::testing
