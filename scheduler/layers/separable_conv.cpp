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
#include "scheduler/layers/conv_layer_build.hpp"
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
    readPenalties(c, {"depthwise", "pointwise", "bias"});
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
    const ConvInput x = convInput(b, l, inputs[0]);
    const std::uint64_t channels = x.image.back(), middle = channels * l.depthMultiplier;
    const bool oneD = convRank(l.kind) == 1;
    const Shape dshape = oneD ? Shape{l.window[1], channels, l.depthMultiplier}
                              : Shape{l.window[0], l.window[1], channels, l.depthMultiplier};
    const Shape pshape = oneD ? Shape{1, middle, l.units} : Shape{1, 1, middle, l.units};
    const std::vector<ConvKernel> kernels = convKernels(b, l, {{"depthwise_kernel", dshape}, {"pointwise_kernel", pshape}});
    // The depthwise output depends on a weight: the pointwise op always delivers its input gradient.
    const std::size_t depthwise = addConv2D(b.graph(), x.value, kernels[0].used, windowOf(l), l.name, channels, "depthwise");
    recordConvOp(b, x.value, depthwise, kernels[0]);
    const std::size_t pointwise = addConv2D(b.graph(), depthwise, kernels[1].used, Window{}, l.name, 1, "pointwise");
    recordConvOp(b, depthwise, pointwise, kernels[1]);
    return convLayerOutput(b, l, pointwise);
  }
};

}  // namespace

std::unique_ptr<Layer> makeSeparableConvLayer() { return std::make_unique<SeparableConvLayer>(); }

}  // namespace ipusim::scheduler
