#pragma once
// Keras's EinsumDense equations ("abc,cd->abd", "...x,xy->...y"), analysed
// as keras/src/layers/core/einsum_dense.py's _analyze_einsum_string does
// (the kernel's shape, the bias's, the full output shape from the partial
// output_shape), and the form ipusim computes: one matrix product of the
// input's rows and the kernel,
//   input [free..., contracted...] . kernel [contracted..., new...]
//     = output [free..., new...]
// with the batch axis free and each group in one order throughout. That is
// every EinsumDense of Keras's MultiHeadAttention ("abc,cde->abde",
// "abcd,cde->abe") and of Keras's docstring. Every other equation is
// refused naming why: axes the input, the kernel and the output all carry
// (a batched product), an input axis summed without the kernel, an order
// that needs a transposition, a bias over some of the new axes only.
#include "scheduler/layers/layer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct EinsumDensePlan {
  Shape outputShape;   // per example (without the batch axis)
  Shape kernelShape;   // as Keras stores it: the equation's kernel axes in order
  Shape biasShape;     // as Keras stores it; empty: no bias
  std::uint64_t rows = 1;        // per example: the free axes but the batch
  std::uint64_t contracted = 1;  // the product's inner dimension
  std::uint64_t produced = 1;    // the product's columns (the new axes)
  std::uint64_t fanIn = 1, fanOut = 1;  // Keras's compute_fans of kernelShape
};

// `inputShape` per example; `outputShape` Keras's partial output_shape
// (without the batch and the elided axes; -1 for None); `biasAxes` Keras's
// bias_axes (`hasBias` false: None). fail(key, what) names the key
// ("equation", "output_shape", "bias_axes", or "" for the input).
EinsumDensePlan planEinsumDense(const std::string& equation, bool hasBias, const std::string& biasAxes,
                                const Shape& inputShape, const std::vector<std::int64_t>& outputShape,
                                const LayerFail& fail);

}  // namespace ipusim::scheduler
