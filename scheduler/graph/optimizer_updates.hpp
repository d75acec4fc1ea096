#pragma once
// The optimizer's part of the training step: one in-place update op per
// weight, run after every reader of the weight, with Keras 3's update rules
// (keras/src/optimizers/*.py; g the gradient, lr the step's learning rate, t
// the step count, 1 on the first step):
//   SGD:        w -= lr * g                                   (momentum 0: ScaledAdd, or
//                                                              GradientDescentUpdate with weight decay or a schedule)
//               v = momentum * v - lr * g; w += v             (momentum > 0)
//               nesterov: w += momentum * v - lr * g
//   Adam:       m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2);
//               w -= lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)
//   AdamW:      Adam's, with weight_decay 0.004 by default
//   RMSprop:    v = rho v + (1 - rho) g^2; centered: a = rho a + (1 - rho) g,
//               d = v - a^2 + epsilon, else d = v + epsilon; inc = lr g / sqrt(d);
//               momentum > 0: mom = momentum * mom + inc; w -= mom; else w -= inc
//   Adagrad:    acc += g^2 (acc starts at initial_accumulator_value); w -= lr g / sqrt(acc + epsilon)
//   Adamax:     m += (g - m)(1 - beta_1); u = max(beta_2 u, |g|);
//               w -= lr m / ((1 - beta_1^t)(u + epsilon))
//   Nadam:      u_t = beta_1 (1 - 0.5 * 0.96^t), u_t1 = beta_1 (1 - 0.5 * 0.96^(t+1)),
//               P_t = u_1 ... u_t (a PerTile state, NadamMomentumProduct), P_t1 = P_t u_t1;
//               m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2);
//               m_hat = u_t1 m / (1 - P_t1) + (1 - u_t) g / (1 - P_t); v_hat = v / (1 - beta_2^t);
//               w -= lr m_hat / (sqrt(v_hat) + epsilon)
// Before the rule, as Keras's base optimizer: the gradients are clipped
// (gradient_clipping.hpp), and with weight_decay every weight decays,
// w -= w * weight_decay * lr (fused into the update vertex).
// A schedule's learning rate is computed each step on every tile from its
// copy of the step count (a LearningRate op into a PerTile value, at Keras's
// iteration t - 1) and read by the updates where they run; it joins the
// outfeed after the loss and the accuracy (g.loss grows by one element).
// Slot variables (v, m, a, mom, acc, u) are OptimizerState values: device
// tensors, always live, in the weights' dtype, zero at the start but
// Adagrad's accumulator. With `offloadState` (training.offload_optimizer_state)
// they live in Streaming Memory instead (Value::inStreamingMemory): the
// lowering loads each onto its weight's tiles just before the update and
// stores it back after, a remote buffer per slot (model/ir/remote_buffer.hpp).
#include "scheduler/graph/op_graph.hpp"

#include <functional>
#include <map>

namespace ipusim::scheduler {

// `weightGrad` maps each of g.weights to its gradient value; `stepCounter`
// gives (creating it on first call) the step-count value the update reads.
void addOptimizerUpdates(OpGraph& g, const OptimizerSpec& optimizer, const std::map<std::size_t, std::size_t>& weightGrad,
                         const std::function<std::size_t()>& stepCounter, bool offloadState = false);

}  // namespace ipusim::scheduler
