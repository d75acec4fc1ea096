#pragma once
// Graph building for convolution and pooling layers (NHWC activations, HWIO
// kernels as Keras stores them): the forward op of a layer, and the backward
// ops the autodiff adds for it, as buildTrainingGraph() does for dense layers
// (bias and activation are the existing AddBias / Relu ops over the NHWC
// output viewed as [batch * oh * ow, filters]).
// Float or half: a convolution's input and kernel share one type (the
// layer's compute type: with mixed_float16 the caller casts the kernel, as
// for dense layers); its output has that type; the kernel gradient's type is
// the caller's (the variables' type, accumulated in float partials).
#include "scheduler/graph/op_graph.hpp"

#include <cstdint>
#include <string>

namespace ipusim::scheduler {

inline constexpr std::size_t kNoValue = ~std::size_t(0);

// The window of a conv2d or pooling layer: its kernel (pool) size, strides
// and padding (the kernel size of a Conv2D op is taken from its kernel's shape).
Window windowOf(const LayerSpec& layer);

// Adds the Conv2D op "<layer>/conv2d": `input` [b, h, w, c], `kernel`
// [kh, kw, c, filters] (kernel size from its shape; strides and padding from
// `window`). Returns the output value [b, oh, ow, filters]. Throws
// std::invalid_argument naming the layer when the shapes do not chain, the
// output would be empty, or the types are not float/half or differ.
std::size_t addConv2D(OpGraph& g, std::size_t input, std::size_t kernel, Window window, const std::string& layer);

struct Conv2DGradients {
  std::size_t input = kNoValue;  // kNoValue unless asked for
  std::size_t kernel = kNoValue;
};
// The backward ops of Conv2D op `convOp` given the gradient of its output
// (of the output's type): the kernel gradient (Conv2DWeightGrad) in
// `kernelGradType` (the variables' type), and, when `wantInputGradient` (not
// for the first layer), the input gradient (Conv2DInputGrad).
Conv2DGradients addConv2DGrad(OpGraph& g, std::size_t convOp, std::size_t outputGrad, bool wantInputGradient,
                              ir::DType kernelGradType = ir::DType::Float);

// MaxPooling2D / AveragePooling2D: `window` is the pool size, strides and
// padding. Returns the output value [b, oh, ow, c].
std::size_t addMaxPool2D(OpGraph& g, std::size_t input, const Window& window, const std::string& layer);
std::size_t addAvgPool2D(OpGraph& g, std::size_t input, const Window& window, const std::string& layer);
// The input gradient of pooling op `poolOp` given its output's gradient.
std::size_t addPool2DGrad(OpGraph& g, std::size_t poolOp, std::size_t outputGrad);

}  // namespace ipusim::scheduler
