#pragma once
// What the convolution family's build() shares (conv2d.cpp, depthwise_conv.cpp,
// separable_conv.cpp, conv_transpose.cpp): the input read as an image, the
// kernels (Glorot uniform with Keras's fans, cast to the compute type), the
// tape entry of a convolution op, and the tail every such layer ends with
// (bias, a 1-D layer's steps x channels shape back, the activation). Each
// layer file keeps only what differs: its kernel shapes and its ops.
#include "scheduler/layers/layer.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ipusim::scheduler {

// The layer's input as the image its convolution reads ([batch] + convImage:
// one row for a 1-D layer); a Reshape, no program.
struct ConvInput {
  std::size_t value;
  Shape image;  // per example: rows, columns, channels
};
ConvInput convInput(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t input);

// The kernels of layer `l` (name, shape as Keras stores it), each Glorot
// uniform with Keras's fans of its shape (kernelFans), created in the order
// given, then each cast to the compute type ("<layer>/<name>_cast"; itself
// when the types agree).
struct ConvKernel {
  std::size_t weight, used;  // the trainable weight, and the value the convolution reads
};
std::vector<ConvKernel> convKernels(TrainingGraphBuilder& b, const LayerSpec& l,
                                    const std::vector<std::pair<std::string, Shape>>& kernels);

// Records the tape entry of the convolution op just added (the graph's last
// op: a Conv2D from `x`, or with `transposed` a transposed convolution's
// Conv2DInputGrad) whose output is `out` and which reads `kernel`'s cast:
// backward, the kernel gradient (in the variables' type) and, when `x`
// wants one, the input gradient.
void recordConvOp(TrainingGraphBuilder& b, std::size_t x, std::size_t out, const ConvKernel& kernel,
                  bool transposed = false);

// The layer's output from its convolution's `y`: the bias (when l.useBias),
// a 1-D layer's steps x channels shape back, the activation.
std::size_t convLayerOutput(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t y);

}  // namespace ipusim::scheduler
