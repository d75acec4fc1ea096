#include "scheduler/layers/conv_layers.hpp"

#include <stdexcept>

namespace ipusim::scheduler {
namespace {

std::string bracketedShape(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

[[noreturn]] void fail(const std::string& layer, const std::string& what) {
  throw std::invalid_argument("layer '" + layer + "': " + what);
}

// The compute type of a layer: float or half, and `other` (if any) of the same type.
ir::DType computeType(const OpGraph& g, std::size_t v, const std::string& layer, std::size_t other = kNoValue) {
  const ir::DType t = g.values[v].dtype;
  if (t != ir::DType::Float && t != ir::DType::Half)
    fail(layer, "'" + g.values[v].name + "' is " + ir::toString(t) + "; expected float or half");
  if (other != kNoValue && g.values[other].dtype != t)
    fail(layer, "'" + g.values[other].name + "' is " + ir::toString(g.values[other].dtype) + " but '" +
                    g.values[v].name + "' is " + ir::toString(t) + "; a convolution's input and kernel share one type");
  return t;
}

const std::vector<std::uint64_t>& nhwc(const OpGraph& g, std::size_t v, const std::string& layer) {
  const auto& s = g.values[v].shape;
  if (s.size() != 4) fail(layer, "expects an input of shape [batch, height, width, channels], got " + bracketedShape(s));
  return s;
}

void checkWindow(const Window& w, std::uint64_t h, std::uint64_t wd, const std::string& layer) {
  if (!w.kernelH || !w.kernelW || !w.strideH || !w.strideW || !w.dilationH || !w.dilationW)
    fail(layer, "kernel sizes, strides and dilations must be at least 1");
  if (!w.outH(h) || !w.outW(wd))
    fail(layer, "a " + std::to_string(w.effectiveH()) + "x" + std::to_string(w.effectiveW()) +
                    " window with padding " + toString(w.padding) + " leaves no output of a " + std::to_string(h) +
                    "x" + std::to_string(wd) + " input");
}

// A convolution kernel's window size and channel dimensions: [kh, kw, a, b]
// or, for a 1-D convolution, [kw, a, b] (kh = 1).
struct KernelDims {
  std::uint64_t kh, kw, a, b;
};
KernelDims kernelDims(const OpGraph& g, std::size_t kernel, const std::string& layer, const std::string& expected) {
  const auto& k = g.values[kernel].shape;
  if (k.size() == 4) return {k[0], k[1], k[2], k[3]};
  if (k.size() == 3) return {1, k[0], k[1], k[2]};
  fail(layer, "kernel '" + g.values[kernel].name + "' has shape " + bracketedShape(k) + "; expected " + expected);
}

std::size_t addValueLike(OpGraph& g, const std::string& name, std::vector<std::uint64_t> shape, ir::DType dtype,
                         ValueKind kind, const std::string& layer) {
  return g.addValue({name, std::move(shape), dtype, kind, layer, std::nullopt});
}

std::size_t addPool(OpGraph& g, OpKind kind, const char* opName, std::size_t input, const Window& window,
                    const std::string& layer) {
  const auto in = nhwc(g, input, layer);
  const ir::DType type = computeType(g, input, layer);
  checkWindow(window, in[1], in[2], layer);
  const std::size_t out = addValueLike(g, layer + "/" + opName, {in[0], window.outH(in[1]), window.outW(in[2]), in[3]},
                                       type, ValueKind::Activation, layer);
  Op op{kind, opName, layer, {input}, {out}};
  op.window = window;
  g.addOp(op);
  return out;
}

}  // namespace

Window windowOf(const LayerSpec& layer) {
  // Global pooling: one window over all rows and columns of its input.
  if (layer.kind == layer_kind::kGlobalAveragePooling2D || layer.kind == layer_kind::kGlobalMaxPooling2D)
    return Window{layer.inputShape.at(0), layer.inputShape.at(1), layer.inputShape.at(0), layer.inputShape.at(1),
                  Padding::Valid};
  // 1-D global pooling: one window over every step of its steps x channels input.
  if (layer.kind == layer_kind::kGlobalAveragePooling1D || layer.kind == layer_kind::kGlobalMaxPooling1D)
    return Window{1, layer.inputShape.at(0), 1, layer.inputShape.at(0), Padding::Valid};
  Window w{layer.window[0], layer.window[1], layer.strides[0], layer.strides[1],
           layer.padding == "same" ? Padding::Same : layer.padding == "causal" ? Padding::Causal : Padding::Valid};
  w.dilationH = layer.dilation[0], w.dilationW = layer.dilation[1];
  return w;
}

std::size_t addConv2D(OpGraph& g, std::size_t input, std::size_t kernel, Window window, const std::string& layer,
                      std::uint64_t groups, const std::string& opName) {
  const auto in = nhwc(g, input, layer);
  if (groups == 0 || in[3] % groups)
    fail(layer, std::to_string(groups) + " groups do not divide the input's " + std::to_string(in[3]) + " channels");
  const std::uint64_t perGroup = in[3] / groups;
  const std::string expected = "[kernel_h, kernel_w, " + std::to_string(perGroup) + ", filters]" +
                               (perGroup == 1 && groups > 1 ? " or [kernel_h, kernel_w, " + std::to_string(in[3]) +
                                                                  ", depth_multiplier]"
                                                            : "") +
                               " for input " + bracketedShape(in) + " in " + std::to_string(groups) + " groups";
  const KernelDims k = kernelDims(g, kernel, layer, expected);
  const std::uint64_t filters = k.a * k.b / perGroup;
  // A grouped kernel [.., c / groups, filters], or a depthwise one [.., c, multiplier].
  const bool grouped = k.a == perGroup, depthwise = perGroup == 1 && k.a == in[3];
  if ((!grouped && !depthwise) || filters % groups)
    fail(layer, "kernel '" + g.values[kernel].name + "' has shape " + bracketedShape(g.values[kernel].shape) +
                    "; expected " + expected + (filters % groups ? " (filters a multiple of the groups)" : ""));
  const ir::DType type = computeType(g, input, layer, kernel);
  window.kernelH = k.kh, window.kernelW = k.kw;
  checkWindow(window, in[1], in[2], layer);
  const std::size_t out = addValueLike(g, layer + "/" + opName, {in[0], window.outH(in[1]), window.outW(in[2]), filters},
                                       type, ValueKind::Activation, layer);
  Op op{OpKind::Conv2D, opName, layer, {input, kernel}, {out}};
  op.window = window;
  op.groups = groups;
  g.addOp(op);
  return out;
}

std::size_t addConv2DTranspose(OpGraph& g, std::size_t input, std::size_t kernel, Window window, std::uint64_t outH,
                               std::uint64_t outW, const std::string& layer) {
  const auto in = nhwc(g, input, layer);
  const KernelDims k =
      kernelDims(g, kernel, layer, "[kernel_h, kernel_w, filters, " + std::to_string(in[3]) + "] for input " + bracketedShape(in));
  if (k.b != in[3])
    fail(layer, "kernel '" + g.values[kernel].name + "' has shape " + bracketedShape(g.values[kernel].shape) +
                    "; expected [kernel_h, kernel_w, filters, " + std::to_string(in[3]) + "] for input " +
                    bracketedShape(in));
  const ir::DType type = computeType(g, input, layer, kernel);
  window.kernelH = k.kh, window.kernelW = k.kw;
  checkWindow(window, outH, outW, layer);
  // TF computes the transposed convolution as the input gradient of the
  // convolution over the output: that convolution must give back the input's size.
  if (window.outH(outH) != in[1] || window.outW(outW) != in[2])
    fail(layer, "output_padding: an output of " + std::to_string(outH) + "x" + std::to_string(outW) +
                    " does not convolve back to the " + std::to_string(in[1]) + "x" + std::to_string(in[2]) +
                    " input with padding " + toString(window.padding) + " (TF's conv2d_transpose refuses it)");
  const std::size_t out = addValueLike(g, layer + "/conv2d_transpose", {in[0], outH, outW, k.a}, type,
                                       ValueKind::Activation, layer);
  Op op{OpKind::Conv2DInputGrad, "conv2d_transpose", layer, {input, kernel}, {out}};
  op.window = window;
  g.addOp(op);
  return out;
}

Conv2DGradients addConv2DTransposeGrad(OpGraph& g, std::size_t transposeOp, std::size_t outputGrad,
                                       bool wantInputGradient, ir::DType kernelGradType, bool wantKernelGradient) {
  const Op t = g.ops.at(transposeOp);  // a copy: addOp reallocates
  if (t.kind != OpKind::Conv2DInputGrad)
    throw std::logic_error("addConv2DTransposeGrad: op " + t.name + " is not a transposed convolution");
  const std::size_t input = t.inputs[0], kernel = t.inputs[1];
  if (g.values[outputGrad].shape != g.values[t.outputs[0]].shape ||
      g.values[outputGrad].dtype != g.values[t.outputs[0]].dtype)
    throw std::logic_error("addConv2DTransposeGrad: the gradient's shape or type differs from the output's");
  Conv2DGradients grads;
  // The convolution over the output: its input the output's gradient, its
  // output gradient the transposed convolution's input.
  if (wantKernelGradient) {
    grads.kernel =
        addValueLike(g, t.layer + "/kernel_grad", g.values[kernel].shape, kernelGradType, ValueKind::Gradient, t.layer);
    Op wu{OpKind::Conv2DWeightGrad, "kernel_grad", t.layer, {outputGrad, input}, {grads.kernel}};
    wu.window = t.window;
    g.addOp(wu);
  }
  if (wantInputGradient) {
    grads.input = addValueLike(g, t.layer + "/input_grad", g.values[input].shape, g.values[input].dtype,
                               ValueKind::Gradient, t.layer);
    Op fwd{OpKind::Conv2D, "input_grad", t.layer, {outputGrad, kernel}, {grads.input}};
    fwd.window = t.window;
    g.addOp(fwd);
  }
  return grads;
}

Conv2DGradients addConv2DGrad(OpGraph& g, std::size_t convOp, std::size_t outputGrad, bool wantInputGradient,
                              ir::DType kernelGradType, bool wantKernelGradient) {
  const Op conv = g.ops.at(convOp);  // a copy: addOp reallocates
  if (conv.kind != OpKind::Conv2D) throw std::logic_error("addConv2DGrad: op " + conv.name + " is not a Conv2D");
  const std::size_t input = conv.inputs[0], kernel = conv.inputs[1];
  if (g.values[outputGrad].shape != g.values[conv.outputs[0]].shape ||
      g.values[outputGrad].dtype != g.values[conv.outputs[0]].dtype)
    throw std::logic_error("addConv2DGrad: the gradient's shape or type differs from the output's");
  if (kernelGradType != ir::DType::Float && kernelGradType != ir::DType::Half)
    throw std::logic_error("addConv2DGrad: a kernel gradient is float or half");
  Conv2DGradients grads;
  const std::string prefix = conv.name == "conv2d" ? "" : conv.name + "_";
  if (wantKernelGradient) {
    grads.kernel = addValueLike(g, conv.layer + "/" + prefix + "kernel_grad", g.values[kernel].shape, kernelGradType,
                                ValueKind::Gradient, conv.layer);
    Op wu{OpKind::Conv2DWeightGrad, prefix + "kernel_grad", conv.layer, {input, outputGrad}, {grads.kernel}};
    wu.window = conv.window;
    wu.groups = conv.groups;
    g.addOp(wu);
  }
  if (wantInputGradient) {
    grads.input = addValueLike(g, conv.layer + "/" + prefix + "input_grad", g.values[input].shape,
                               g.values[input].dtype, ValueKind::Gradient, conv.layer);
    Op ig{OpKind::Conv2DInputGrad, prefix + "input_grad", conv.layer, {outputGrad, kernel}, {grads.input}};
    ig.window = conv.window;
    ig.groups = conv.groups;
    g.addOp(ig);
  }
  return grads;
}

std::size_t addMaxPool2D(OpGraph& g, std::size_t input, const Window& window, const std::string& layer) {
  return addPool(g, OpKind::MaxPool2D, "max_pool", input, window, layer);
}

std::size_t addAvgPool2D(OpGraph& g, std::size_t input, const Window& window, const std::string& layer) {
  return addPool(g, OpKind::AvgPool2D, "avg_pool", input, window, layer);
}

std::size_t addPool2DGrad(OpGraph& g, std::size_t poolOp, std::size_t outputGrad) {
  const Op pool = g.ops.at(poolOp);
  if (pool.kind != OpKind::MaxPool2D && pool.kind != OpKind::AvgPool2D)
    throw std::logic_error("addPool2DGrad: op " + pool.name + " is not a pooling op");
  const std::size_t input = pool.inputs[0];
  if (g.values[outputGrad].dtype != g.values[input].dtype)
    throw std::logic_error("addPool2DGrad: the gradient's type differs from the input's");
  const std::size_t grad = addValueLike(g, pool.layer + "/input_grad", g.values[input].shape, g.values[input].dtype,
                                        ValueKind::Gradient, pool.layer);
  const bool isMax = pool.kind == OpKind::MaxPool2D;
  Op op{isMax ? OpKind::MaxPool2DGrad : OpKind::AvgPool2DGrad, isMax ? "max_pool_grad" : "avg_pool_grad", pool.layer,
        isMax ? std::vector<std::size_t>{input, outputGrad} : std::vector<std::size_t>{outputGrad}, {grad}};
  op.window = pool.window;
  g.addOp(op);
  return grad;
}

}  // namespace ipusim::scheduler
