#include "scheduler/layers/conv_layer_build.hpp"

#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/conv_keys.hpp"
#include "scheduler/layers/conv_layers.hpp"

#include <stdexcept>

namespace ipusim::scheduler {

ConvInput convInput(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t input) {
  const std::string kind = l.kind;
  Shape image = convImage(l, l.inputShape, convRank(l.kind), [&kind](const std::string&, const std::string& what) {
    throw std::logic_error(kind + " layer: " + what);  // shape inference checked it
  });
  const std::size_t x = b.shaped(input, image, l.name, "reshape_input");
  return {x, std::move(image)};
}

std::vector<ConvKernel> convKernels(TrainingGraphBuilder& b, const LayerSpec& l,
                                    const std::vector<std::pair<std::string, Shape>>& kernels) {
  std::vector<ConvKernel> out;
  for (const auto& kernel : kernels) {
    // (not a structured binding: clang before 16 cannot capture one in a lambda)
    const auto fans = kernelFans(kernel.second);
    out.push_back({b.weight(l, kernel.first, kernel.second, [&] { return b.glorotUniform(fans.first, fans.second); }), 0});
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i].used = b.cast(out[i].weight, b.compute(), l.name + "/" + kernels[i].first + "_cast", l.name, ValueKind::Activation);
  return out;
}

void recordConvOp(TrainingGraphBuilder& b, std::size_t x, std::size_t out, const ConvKernel& kernel, bool transposed) {
  const std::size_t op = b.graph().ops.size() - 1, weight = kernel.weight;
  b.record({x}, out, b.trains(weight), [&b, x, weight, op, transposed](const Backward& bw) {
    const bool trains = bw.trains(weight);
    const Conv2DGradients grads =
        transposed ? addConv2DTransposeGrad(b.graph(), op, bw.grad, bw.wants(x), b.variables(), trains)
                   : addConv2DGrad(b.graph(), op, bw.grad, bw.wants(x), b.variables(), trains);
    if (trains) bw.weightGradient(weight, grads.kernel);
    if (bw.wants(x)) bw.deliver(x, grads.input);
  });
}

std::size_t convLayerOutput(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t y) {
  y = b.bias(l, y);
  if (convRank(l.kind) == 1) y = b.shaped(y, l.outputShape, l.name, "steps");
  return b.activation(l, l.activation, y);
}

}  // namespace ipusim::scheduler
