#pragma once
// The activations (LayerSpec::activation and its ActivationParams): the
// codelets that compute each and its gradient, and the ops an activation
// adds to the training graph (TrainingGraphBuilder::activation calls
// addActivation). The formulas are Keras's (keras/src/activations/
// activations.py); each gradient reads the forward output where that
// determines the derivative (relu family, sigmoid, tanh, elu, selu, softplus,
// softsign, hard_sigmoid, exponential, softmax) and the forward input
// otherwise (gelu in both forms, silu, hard_silu, mish). The codelets and
// their costs: model/codelets/activation_codelets.cpp, elementwise_unary.cpp,
// non_linearity_grad.cpp, softmax.cpp.
#include "scheduler/models/layer_spec.hpp"
#include "scheduler/models/workload.hpp"

#include <cstddef>
#include <map>
#include <string>

namespace ipusim::scheduler {

class TrainingGraphBuilder;

struct ActivationCodelets {
  std::string forward;   // the codelet computing the activation ("Elu"; typed by the lowering)
  std::string gradient;  // its gradient's; "" for exponential, whose gradient is a Mul (grad x out)
  bool gradientReadsOutput = true;        // else it reads the forward input
  std::map<std::string, double> params;  // of both codelets
};

// For an activation other than linear and softmax (std::logic_error for those).
// The relu family picks by its params: Relu (none), ClippedRelu (a max value
// only), LeakyRelu (a slope only), BoundedLeakyRelu (otherwise).
ActivationCodelets activationCodelets(Activation a, const ActivationParams& p);

// Activation `a` (constants `p`) of layer `l` over `x`: adds its op and
// records its gradient; returns the output. Linear adds nothing; a softmax
// ending the model under a categorical cross-entropy is the loss's own
// (SoftmaxCrossEntropy), as is a sigmoid ending it under a binary
// cross-entropy; any other softmax is a Softmax op over the last axis.
std::size_t addActivation(TrainingGraphBuilder& b, const LayerSpec& l, Activation a, const ActivationParams& p,
                          std::size_t x);

// The op of activation `a` (not softmax) over `x`, named `name` in `layer`
// ("<layer>/<name>"), and its gradient's; linear adds nothing. (addActivation
// for a layer's own activation; a layer of many ops, a recurrent cell, names each.)
std::size_t addActivationOp(TrainingGraphBuilder& b, const std::string& layer, const std::string& name, Activation a,
                            const ActivationParams& p, std::size_t x);

// The softmax of `x` ([batch] + per-example shape) along per-example axis
// `axis` (1 the first after the batch) as a Softmax op of layer `layer`, and
// its gradient (SoftmaxGrad, from the output).
std::size_t addSoftmax(TrainingGraphBuilder& b, const std::string& layer, std::size_t x, std::size_t axis);

// Whether layer `l`'s activation `a` is computed by the loss (see addActivation;
// never in predict, which has no loss).
bool fusedWithLoss(const Workload& w, const LayerSpec& l, Activation a);

}  // namespace ipusim::scheduler
