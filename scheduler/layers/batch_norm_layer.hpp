#pragma once
// Graph building for a batch_normalization layer in training (Keras's
// BatchNormalization, axis -1: one mean and variance per channel, the last
// axis, over every other axis), decomposed as popnn's batch norm
// (graphcore/poplibs lib/popnn/BatchNorm.cpp: batchNormEstimates,
// batchNormalise, batchNormDeltas, batchNormGradients):
//   forward   mean = sum(x) / M and meanSquare = sum(x * x) / M (ReduceRows,
//             over the M = elements / channels values of each channel);
//             BatchNormStatistics: variance = meanSquare - mean^2 (biased, as
//             Keras's ops.moments), invStdDev = 1 / sqrt(variance + epsilon),
//             moving = moving * momentum + batch * (1 - momentum);
//             BatchNormalise: whitened = (x - mean) * invStdDev,
//             out = whitened * gamma + beta.
//   backward  betaDelta = sum(dy), gammaDelta = sum(dy * whitened) (Mul,
//             ReduceRows); BatchNormInputGrad:
//             dx = (dy - (whitened * gammaDelta + betaDelta) / M) * gamma * invStdDev.
// The statistics, gamma and beta as the vertices read them are float (Keras
// normalises float16 inputs in float32); x, whitened and the output have the
// layer's compute type. gamma and beta are weights (the optimizer updates
// them) when `scale` / `center`, else fixed non-trainable values (1 and 0);
// the moving statistics are non-trainable device state, float.
#include "scheduler/models/layer_spec.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/graph/training_graph.hpp"

#include <cstdint>
#include <map>

namespace ipusim::scheduler {

struct BatchNormForward {
  std::string layer;
  std::size_t input = 0, output = 0, whitened = 0, invStdDev = 0;
  std::size_t gammaUsed = 0;                      // gamma as the vertices read it (float)
  std::size_t gamma = ~std::size_t(0), beta = ~std::size_t(0);  // the trainable weights, when scale / center
  std::size_t movingMean = 0, movingVariance = 0;
};

// Adds the forward ops of batch normalization layer `l` over `input`
// (outside fit, and in fit for a frozen layer, as Keras's training=False:
// BatchNormInvStdDev of the moving variance, and BatchNormalise with the
// moving mean, which stay as they are)
// [batch, ..., channels] (of the builder's compute type); gamma and beta are
// the layer's weights (gamma first) in the variables' type, shared with its
// other calls as its moving statistics are.
BatchNormForward addBatchNorm(TrainingGraphBuilder& b, std::size_t input, const LayerSpec& l);

// The backward ops given the gradient of the output: the gradients of gamma
// and beta (in the weights' type) into `weightGrad`, and the input gradient
// when `wantInputGradient` (else ~0).
std::size_t addBatchNormGrad(OpGraph& g, const BatchNormForward& f, std::size_t outputGrad, bool wantInputGradient,
                             std::map<std::size_t, std::size_t>& weightGrad);

// The input gradient of a frozen layer's normalization by its moving
// statistics (constants then): dx = dy * gamma * invStdDev per channel, as
// BatchNormalise of dy with a zero mean and a zero shift (its whitened
// output, dy * invStdDev, unused).
std::size_t addFrozenBatchNormInputGrad(TrainingGraphBuilder& b, const BatchNormForward& f, std::size_t outputGrad,
                                        const LayerSpec& l);

}  // namespace ipusim::scheduler
