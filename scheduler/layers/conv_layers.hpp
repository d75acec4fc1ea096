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

// The window of a convolution or pooling layer: its kernel (pool) size,
// strides, the kernel's dilation and padding (the kernel size of a Conv2D op
// is taken from its kernel's shape). A 1-D layer's window is one row.
Window windowOf(const LayerSpec& layer);

// Adds the Conv2D op "<layer>/<opName>" (output value of that name): `input` [b, h, w, c] in `groups` conv
// groups of c / groups channels, `kernel` [kh, kw, c / groups, filters] (a
// grouped kernel as Keras stores it; a depthwise kernel [kh, kw, c,
// multiplier] is the same elements, filters c x multiplier; rank 3 [kw, ., .]
// for a 1-D convolution: kh = 1); kernel size from its shape; strides,
// dilation and padding from `window`. Output channel f belongs to group
// f / (filters / groups). Returns the output value [b, oh, ow, filters].
// Throws std::invalid_argument naming the layer when the shapes do not
// chain, the groups do not divide the channels, the output would be empty,
// or the types are not float/half or differ.
std::size_t addConv2D(OpGraph& g, std::size_t input, std::size_t kernel, Window window, const std::string& layer,
                      std::uint64_t groups = 1, const std::string& opName = "conv2d");

struct Conv2DGradients {
  std::size_t input = kNoValue;  // kNoValue unless asked for
  std::size_t kernel = kNoValue;
};
// The backward ops of Conv2D op `convOp` given the gradient of its output
// (values "<layer>/kernel_grad", "<layer>/input_grad"; "<layer>/<op>_kernel_grad",
// ... for an op not named "conv2d", e.g. a separable convolution's two)
// (of the output's type): the kernel gradient (Conv2DWeightGrad) in
// `kernelGradType` (the variables' type) unless not `wantKernelGradient` (a
// frozen layer's), and, when `wantInputGradient` (not for the first layer),
// the input gradient (Conv2DInputGrad).
Conv2DGradients addConv2DGrad(OpGraph& g, std::size_t convOp, std::size_t outputGrad, bool wantInputGradient,
                              ir::DType kernelGradType = ir::DType::Float, bool wantKernelGradient = true);

// A transposed convolution (Keras's Conv2DTranspose, as TF computes it: the
// input gradient of the convolution from the output to the input):
// `input` [b, h, w, c], `kernel` [kh, kw, filters, c] (rank 3 for 1-D),
// `window` that convolution's (strides, dilation, padding over the output),
// the output [b, outH, outW, filters], which that convolution must map back
// onto h x w (else std::invalid_argument naming the layer and
// output_padding). Adds op "<layer>/conv2d_transpose" (a Conv2DInputGrad).
std::size_t addConv2DTranspose(OpGraph& g, std::size_t input, std::size_t kernel, Window window, std::uint64_t outH,
                               std::uint64_t outW, const std::string& layer);
// Its backward ops: the kernel gradient (Conv2DWeightGrad of the output's
// gradient with the input as deltas) and the input gradient (the forward
// convolution of the output's gradient, a Conv2D), each when asked.
Conv2DGradients addConv2DTransposeGrad(OpGraph& g, std::size_t transposeOp, std::size_t outputGrad,
                                       bool wantInputGradient, ir::DType kernelGradType = ir::DType::Float,
                                       bool wantKernelGradient = true);

// MaxPooling2D / AveragePooling2D: `window` is the pool size, strides and
// padding. Returns the output value [b, oh, ow, c].
std::size_t addMaxPool2D(OpGraph& g, std::size_t input, const Window& window, const std::string& layer);
std::size_t addAvgPool2D(OpGraph& g, std::size_t input, const Window& window, const std::string& layer);
// The input gradient of pooling op `poolOp` given its output's gradient.
std::size_t addPool2DGrad(OpGraph& g, std::size_t poolOp, std::size_t outputGrad);

}  // namespace ipusim::scheduler
