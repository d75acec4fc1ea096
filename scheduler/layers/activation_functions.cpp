#include "scheduler/layers/activation_functions.hpp"

#include "scheduler/graph/training_graph.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

// Keras's relu (activations.relu, the ReLU layer) by its constants.
ActivationCodelets reluFamily(const ActivationParams& p) {
  const bool slope = p.negativeSlope != 0, threshold = p.threshold != 0, max = p.maxValue.has_value();
  if (!slope && !threshold && !max) return {"Relu", "ReluGrad", true, {}};
  if (!slope && !threshold) return {"ClippedRelu", "ClippedReluGrad", true, {{"maxValue", *p.maxValue}}};
  if (!threshold && !max) return {"LeakyRelu", "LeakyReluGrad", true, {{"negativeSlope", p.negativeSlope}}};
  return {"BoundedLeakyRelu",
          "BoundedLeakyReluGrad",
          true,
          {{"maxValue", max ? *p.maxValue : 0.0},
           {"hasMax", max ? 1.0 : 0.0},
           {"negativeSlope", p.negativeSlope},
           {"threshold", p.threshold}}};
}

}  // namespace

ActivationCodelets activationCodelets(Activation a, const ActivationParams& p) {
  switch (a) {
    case Activation::Relu:
    case Activation::Relu6:
    case Activation::LeakyRelu: return reluFamily(p);
    case Activation::Sigmoid: return {"Sigmoid", "SigmoidGrad", true, {}};
    case Activation::Tanh: return {"Tanh", "TanhGrad", true, {}};
    case Activation::Gelu: return {"Gelu", "GeluGrad", false, {}};
    case Activation::GeluApproximate: return {"GeluTanh", "GeluTanhGrad", false, {}};
    case Activation::Elu: return {"Elu", "EluGrad", true, {{"alpha", p.alpha}}};
    case Activation::Selu: return {"Selu", "SeluGrad", true, {}};
    case Activation::Silu: return {"Swish", "SwishGrad", false, {}};
    case Activation::Softplus: return {"Softplus", "SoftplusGrad", true, {}};
    case Activation::Softsign: return {"Softsign", "SoftsignGrad", true, {}};
    case Activation::HardSigmoid: return {"HardSigmoid", "HardSigmoidGrad", true, {{"slope", p.hardSigmoidSlope}}};
    case Activation::HardSilu: return {"HardSilu", "HardSiluGrad", false, {}};
    case Activation::Exponential: return {"Exp", "", true, {}};
    case Activation::Mish: return {"Mish", "MishGrad", false, {}};
    case Activation::Linear:
    case Activation::Softmax: break;
  }
  throw std::logic_error(std::string("no elementwise codelet computes activation ") + toString(a));
}

bool fusedWithLoss(const Workload& w, const LayerSpec& l, Activation a) {
  if (w.task == Task::Predict) return false;  // no loss: the prediction is the activation's output
  const std::vector<std::size_t> outputs = modelOutputs(w);
  if (std::none_of(outputs.begin(), outputs.end(), [&](std::size_t o) { return &w.layers[o] == &l; })) return false;
  if (a == Activation::Softmax)
    return w.loss.type == "sparse_categorical_crossentropy" || w.loss.type == "categorical_crossentropy";
  return a == Activation::Sigmoid && w.loss.type == "binary_crossentropy";
}

std::size_t addActivation(TrainingGraphBuilder& b, const LayerSpec& l, Activation a, const ActivationParams& p,
                          std::size_t x) {
  if (a == Activation::Linear || fusedWithLoss(b.workload(), l, a)) return x;
  if (a == Activation::Softmax) {  // over the last axis of the layer's output, however its value is laid out
    const std::size_t shaped = b.shaped(x, l.outputShape, l.name, "softmax_input");
    return addSoftmax(b, l.name, shaped, l.outputShape.size());
  }
  return addActivationOp(b, l.name, toString(a), a, p, x);
}

std::size_t addActivationOp(TrainingGraphBuilder& b, const std::string& layer, const std::string& name, Activation a,
                            const ActivationParams& p, std::size_t x) {
  if (a == Activation::Linear) return x;
  if (a == Activation::Softmax) throw std::logic_error("addActivationOp: softmax has its own op (addSoftmax)");
  OpGraph& g = b.graph();
  const ActivationCodelets codelets = activationCodelets(a, p);
  const bool plainRelu = codelets.forward == "Relu";
  const std::size_t out = b.value(layer + "/" + name, g.values[x].shape, b.compute(), ValueKind::Activation, layer);
  Op op{plainRelu ? OpKind::Relu : OpKind::NonLinearity, name, layer, {x}, {out}};
  op.activation = a;
  op.activationParams = p;
  g.addOp(op);
  b.record({x}, out, false, [&b, x, out, a, p, codelets, plainRelu, layer, name](const Backward& bw) {
    OpGraph& g = b.graph();
    const std::string gradName = name + "_grad";
    const std::size_t pre = b.value(layer + "/" + gradName, g.values[x].shape, b.compute(), ValueKind::Gradient, layer);
    if (codelets.gradient.empty()) {  // exponential: d exp(x) = exp(x) dx
      g.addOp({OpKind::Mul, gradName, layer, {bw.grad, out}, {pre}});
    } else {
      Op op{plainRelu ? OpKind::ReluGrad : OpKind::NonLinearityGrad, gradName, layer,
            {codelets.gradientReadsOutput ? out : x, bw.grad}, {pre}};
      op.activation = a;
      op.activationParams = p;
      g.addOp(op);
    }
    bw.deliver(x, pre);
  });
  return out;
}

std::size_t addSoftmax(TrainingGraphBuilder& b, const std::string& layer, std::size_t x, std::size_t axis) {
  OpGraph& g = b.graph();
  const std::vector<std::uint64_t> shape = g.values[x].shape;  // [batch] + per example: axis indexes it directly
  std::uint64_t inner = 1;
  for (std::size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const std::vector<std::uint64_t> blocks{shape.at(axis), inner};
  const std::size_t out = b.value(layer + "/softmax", shape, b.compute(), ValueKind::Activation, layer);
  Op op{OpKind::Softmax, "softmax", layer, {x}, {out}};
  op.blocks = blocks;
  g.addOp(op);
  b.record({x}, out, false, [&b, x, out, blocks, layer](const Backward& bw) {
    OpGraph& g = b.graph();
    const std::size_t pre = b.value(layer + "/softmax_grad", g.values[x].shape, b.compute(), ValueKind::Gradient, layer);
    Op op{OpKind::SoftmaxGrad, "softmax_grad", layer, {out, bw.grad}, {pre}};
    op.blocks = blocks;
    g.addOp(op);
    bw.deliver(x, pre);
  });
  return out;
}

}  // namespace ipusim::scheduler
