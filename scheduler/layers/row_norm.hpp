#pragma once
// Graph building that layer and group normalization share
// (layer_normalization.cpp, group_normalization.cpp), as popnn builds both
// from one normalisation over groups of values (graphcore/poplibs
// lib/popnn/GroupNorm.cpp; its layer norm is a group norm of one group):
//   a row normalisation: values [rows, n], each row whitened by its own mean
//   and biased variance (LayerNormalise: whitened, invStdDev per row, float;
//   its gradient LayerNormInputGrad);
//   a column affine: out = whitened gamma + beta over [rows, n] values, one
//   gamma and beta per column (ScaleShift), the layer's weights when
//   `scale` / `center`; its gradients dgamma = sum_rows(dy whitened),
//   dbeta = sum_rows(dy) (Mul, ReduceRows), dWhitened = dy gamma.
#include "scheduler/graph/training_graph.hpp"

#include <cstdint>
#include <string>

namespace ipusim::scheduler {

struct RowNormalized {
  std::size_t whitened = 0, invStdDev = 0;  // [rows, n] (compute type), [rows] (float)
};

// LayerNormalise over `x`, a [rows, n] value.
RowNormalized addRowNormalise(TrainingGraphBuilder& b, std::size_t x, double epsilon, const std::string& layer);
// LayerNormInputGrad: the input's gradient [rows, n] from the whitened values' (read as [rows, n]).
std::size_t addRowNormaliseGrad(TrainingGraphBuilder& b, const RowNormalized& f, std::size_t whitenedGrad,
                                const std::string& layer);

struct ColumnAffine {
  static constexpr std::size_t kNone = ~std::size_t(0);
  std::size_t gamma = kNone, beta = kNone;  // the trainable weights, when scale / center
  std::size_t gammaUsed = kNone;            // gamma as ScaleShift reads it (compute type)
  std::size_t output = 0;                   // whitened itself when the layer has neither
};

// out = whitened gamma + beta over `whitened` [rows, n]: layer `l`'s gamma
// (ones) and beta (zeros), n each, or fixed ones and zeros without scale / center.
ColumnAffine addColumnAffine(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t whitened);
// Its backward from the output's gradient `grad` [rows, n]: the weights'
// gradients delivered through `bw`; returns the whitened values' gradient
// (grad gamma, or grad itself without scale) when `wantWhitenedGrad`.
std::size_t addColumnAffineGrad(TrainingGraphBuilder& b, const Backward& bw, const LayerSpec& l, const ColumnAffine& a,
                                std::size_t whitened, std::size_t grad, bool wantWhitenedGrad);

// A Reshape op (no tape entry: for values inside one layer's own backward).
std::size_t reshapedValue(OpGraph& g, std::size_t v, std::vector<std::uint64_t> shape, const std::string& layer,
                          const std::string& name, ValueKind kind);

}  // namespace ipusim::scheduler
