// separable_conv2d, separable_conv1d (Keras's SeparableConv2D,
// SeparableConv1D): a depthwise convolution (depthwise_conv.cpp's: kernel
// "depthwise_kernel" [kh, kw, channels, depth_multiplier], the strides,
// dilation_rate and padding) then a pointwise 1x1 convolution to `filters`
// (kernel "pointwise_kernel" [1, 1, channels x depth_multiplier, filters]),
// the bias after the pointwise one, as Keras's ops.separable_conv. Both
// kernels Glorot uniform with Keras's fans, drawn in that order. The ops:
// two Conv2D ops ("depthwise", in conv groups, and "pointwise") with their
// gradients (conv_layers.hpp).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/conv_keys.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

class SeparableConvLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {k::kSeparableConv2D, k::kSeparableConv1D}; }
  std::vector<std::string> kerasClasses() const override { return {"SeparableConv2D", "SeparableConv1D"}; }
  std::set<std::string> workloadKeys(const std::string&) const override {
    return {"filters", "kernel_size", "strides", "padding", "depth_multiplier", "dilation_rate", "use_bias", "activation"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("filters")) l.fail(l.key("filters"), "missing (expected a positive integer)");
    spec.units = l.count32("filters", 0, true);
    readConvWindow(l, spec, convRank(spec.kind), false);
    spec.depthMultiplier = l.count32("depth_multiplier", 1, true);
    spec.useBias = l.boolean("use_bias", true);
    readActivation(l, spec, false);
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    spec.kind = cls == "SeparableConv1D" ? k::kSeparableConv1D : k::kSeparableConv2D;
    spec.units = readPositive(c, "filters", 0);
    readConvWindow(c, spec, convRank(spec.kind), false);
    spec.depthMultiplier = readPositive(c, "depth_multiplier", 1);
    c.requireValue("groups", 1, "grouped separable convolutions");  // TF 2.x Keras's Conv base key
    readActivation(c, spec);
    spec.useBias = c.boolean("use_bias", true);
    c.requireInitializer("depthwise_initializer", {"GlorotUniform"});
    c.requireInitializer("pointwise_initializer", {"GlorotUniform"});
    c.requireInitializer("bias_initializer", {"Zeros"});
    requireNoPenalties(c, {"depthwise", "pointwise", "bias"});
    // TF 2.x Keras also writes the Conv base's kernel keys, which SeparableConv does not use.
    c.requireInitializer("kernel_initializer", {"GlorotUniform"});
    c.requireNull("kernel_regularizer", "a regularizer adds to the loss");
    c.requireNull("kernel_constraint", "a constraint changes the update");
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const int rank = convRank(spec.kind);
    const std::uint64_t channels = convImage(spec, in[0], rank, fail).back();
    if (channels * spec.depthMultiplier > 0xffffffffull)
      fail("depth_multiplier", std::to_string(spec.depthMultiplier) + " x " + std::to_string(channels) +
                                   " channels is more than 2^32 - 1 channels");
    return convOutputShape(spec, in[0], rank, spec.units, fail);
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    const std::uint64_t middle = l.inputShape.back() * l.depthMultiplier;
    checkConvLimits(l, std::uint64_t(l.window[0]) * l.window[1] * middle, "depth_multiplier", batch, fail);
    checkConvLimits(l, middle * l.units, "filters", batch, fail);
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    const long double middle = (long double)l.inputShape.back() * l.depthMultiplier;
    // The depthwise output (the pointwise kernel gradient reads it) has the
    // output's positions and `middle` channels; both it and the input are kept.
    const long double positions = (long double)elementsOf(l.outputShape) / l.units;
    Footprint f{{{"depthwise_kernel", (long double)l.window[0] * l.window[1] * middle},
                 {"pointwise_kernel", middle * l.units}},
                0, "input", (long double)elementsOf(l.inputShape) + positions * middle};
    if (l.useBias) f.weights.push_back({"bias", l.units});
    return f;
  }
  bool readsShapedInput(const LayerSpec&) const override { return true; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const int rank = convRank(l.kind);
    const Shape image = convImage(l, l.inputShape, rank, [](const std::string&, const std::string& what) {
      throw std::logic_error("separable conv layer: " + what);
    });
    const std::size_t x = b.shaped(inputs[0], image, l.name, "reshape_input");
    const std::uint64_t channels = image.back(), middle = channels * l.depthMultiplier;
    const Shape dshape = rank == 1 ? Shape{l.window[1], channels, l.depthMultiplier}
                                   : Shape{l.window[0], l.window[1], channels, l.depthMultiplier};
    const Shape pshape = rank == 1 ? Shape{1, middle, l.units} : Shape{1, 1, middle, l.units};
    // (not a structured binding: clang before 16 cannot capture one in a lambda)
    const auto dFans = kernelFans(dshape);
    const auto pFans = kernelFans(pshape);
    const std::size_t dk = b.weight(l, "depthwise_kernel", dshape, [&] { return b.glorotUniform(dFans.first, dFans.second); });
    const std::size_t pk = b.weight(l, "pointwise_kernel", pshape, [&] { return b.glorotUniform(pFans.first, pFans.second); });
    const std::size_t dkUsed = b.cast(dk, b.compute(), l.name + "/depthwise_kernel_cast", l.name, ValueKind::Activation);
    const std::size_t pkUsed = b.cast(pk, b.compute(), l.name + "/pointwise_kernel_cast", l.name, ValueKind::Activation);
    OpGraph& g = b.graph();
    const std::size_t depthwise = addConv2D(g, x, dkUsed, windowOf(l), l.name, channels, "depthwise");
    const std::size_t depthwiseOp = g.ops.size() - 1;
    b.record({x}, depthwise, true, [&b, x, dk, depthwiseOp](const Backward& bw) {
      const Conv2DGradients grads = addConv2DGrad(b.graph(), depthwiseOp, bw.grad, bw.wants(x), b.variables());
      bw.weightGradient(dk, grads.kernel);
      if (bw.wants(x)) bw.deliver(x, grads.input);
    });
    const std::size_t pointwise = addConv2D(g, depthwise, pkUsed, Window{}, l.name, 1, "pointwise");
    const std::size_t pointwiseOp = g.ops.size() - 1;
    b.record({depthwise}, pointwise, true, [&b, depthwise, pk, pointwiseOp](const Backward& bw) {
      const Conv2DGradients grads = addConv2DGrad(b.graph(), pointwiseOp, bw.grad, true, b.variables());
      bw.weightGradient(pk, grads.kernel);
      bw.deliver(depthwise, grads.input);
    });
    std::size_t y = b.bias(l, pointwise);
    if (rank == 1) y = b.shaped(y, l.outputShape, l.name, "steps");
    return b.activation(l, l.activation, y);
  }
};

}  // namespace

std::unique_ptr<Layer> makeSeparableConvLayer() { return std::make_unique<SeparableConvLayer>(); }

}  // namespace ipusim::scheduler
