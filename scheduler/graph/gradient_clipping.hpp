#pragma once
// Keras's gradient clipping (base_optimizer.py, _clip_gradients), applied to
// the gradients before weight decay and the updates:
//   clipnorm:        each gradient g -> g * clipnorm / max(||g||, clipnorm)
//                    (a SumOfSquares per gradient, then a ClipByNorm);
//   global_clipnorm: every gradient g -> g * global_clipnorm * min(1 / n, 1 / global_clipnorm),
//                    n the L2 norm of all gradients together (clip_by_global_norm: one
//                    SumOfSquares over every gradient, a reduction on the device, then
//                    one ClipByNorm of them all); a NaN or infinite n makes every
//                    gradient NaN, as Keras's;
//   clipvalue:       each element to [-clipvalue, clipvalue] (a ClipByValue per gradient).
#include "scheduler/graph/op_graph.hpp"

#include <map>

namespace ipusim::scheduler {

// `weightGrad` maps each of g.weights to its gradient value; returns the
// map to the gradients the updates read (the same when nothing clips).
std::map<std::size_t, std::size_t> clipGradients(OpGraph& g, const OptimizerSpec& optimizer,
                                                 const std::map<std::size_t, std::size_t>& weightGrad);

}  // namespace ipusim::scheduler
