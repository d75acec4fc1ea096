#pragma once
// Graph building for the merge layers (Keras's Add, Subtract, Multiply,
// Maximum, Minimum, Concatenate): two or more inputs of one shape become one
// output, and the backward pass hands each input its share of the output's
// gradient.
//   add          out = in0 + in1 + ...      (Add ops, left to right)
//   subtract     out = in0 - in1            (Sub)
//   multiply     out = in0 * in1 * ...      (Mul ops, left to right)
//   maximum      out = max(max(in0, in1), ...)  (Maximum ops, left to right, as Keras)
//   minimum      likewise (Minimum ops)
//   concatenate  out = the inputs side by side along the layer's axis
//                (Concat: one Copy of 2-D regions, each input's rows into
//                their columns of the output's rows)
// Gradients: add passes the gradient itself to every input; subtract passes
// it to in0 and its negation (Neg) to in1; multiply gives in_i the gradient
// times every other input (Mul ops); concatenate gives each input its
// columns of the gradient (Slice: one Copy); maximum and minimum route the
// gradient back through their chain of pairs to the operand that won
// (ExtremumGrad, a tie going to the first, as TensorFlow's _MaximumGrad).
#include "scheduler/models/layer_spec.hpp"
#include "scheduler/graph/op_graph.hpp"

#include <functional>
#include <vector>

namespace ipusim::scheduler {

// Adds the ops of merge layer `l` (shapes inferred) over `inputs` (values of
// the compute type, [batch, ...]); returns the output value.
std::size_t addMerge(OpGraph& g, const LayerSpec& l, const std::vector<std::size_t>& inputs, std::uint64_t batch);

// The backward ops of a merge whose forward ops are `ops` (copies, in order:
// the op list grows), given the output's gradient: for every input index i
// with wants(inputs[i]), deliver(inputs[i], its gradient).
void addMergeGrad(OpGraph& g, const std::string& kind, const std::vector<Op>& ops, const std::vector<std::size_t>& inputs,
                  std::size_t outputGrad, const std::function<bool(std::size_t)>& wants,
                  const std::function<void(std::size_t, std::size_t)>& deliver);

}  // namespace ipusim::scheduler
