#pragma once
// The optimizer's part of the training step: one in-place update op per
// weight, run after every reader of the weight, with Keras's update rules
// (keras.optimizers SGD, Adam, RMSprop, Keras 3 formulas):
//   SGD:        w -= lr * g                                   (momentum 0)
//               v = momentum * v - lr * g; w += v             (momentum > 0)
//               nesterov: w += momentum * v - lr * g
//   Adam:       t = step; m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2);
//               w -= lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)
//   RMSprop:    v = rho v + (1 - rho) g^2; centered: a = rho a + (1 - rho) g,
//               d = v - a^2 + epsilon, else d = v + epsilon; inc = lr g / sqrt(d);
//               momentum > 0: mom = momentum * mom + inc; w -= mom; else w -= inc
// Slot variables (v, m, a, mom) are OptimizerState values: device tensors,
// always live, zero at the start, in the weights' dtype.
#include "scheduler/graph/op_graph.hpp"

#include <functional>
#include <map>

namespace ipusim::scheduler {

// `weightGrad` maps each of g.weights to its gradient value; `stepCounter`
// gives (creating it on first call) the step-count value Adam reads.
void addOptimizerUpdates(OpGraph& g, const OptimizerSpec& optimizer, const std::map<std::size_t, std::size_t>& weightGrad,
                         const std::function<std::size_t()>& stepCounter);

}  // namespace ipusim::scheduler
