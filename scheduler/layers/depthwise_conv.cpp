// depthwise_conv2d, depthwise_conv1d (Keras's DepthwiseConv2D,
// DepthwiseConv1D): each input channel convolved with its own
// depth_multiplier filters, output channel c x depth_multiplier + m; the
// kernel [kh, kw, channels, depth_multiplier] as Keras stores it ([k, ...]
// for 1-D; Glorot uniform with Keras's fans: kh kw channels in, kh kw
// depth_multiplier out), a bias per output channel, strides,
// dilation_rate, padding valid or same. One Conv2D op in as many conv groups
// as channels (conv_layers.hpp): planned as poplin plans depthwise
// convolutions, the groups split over the tiles and each tile's vertex
// chosen among AMP, HMAC and VMAC by its cost (planning/conv_plan.hpp),
// never one convolution per channel.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/conv_keys.hpp"
#include "scheduler/layers/conv_layer_build.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

class DepthwiseConvLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {k::kDepthwiseConv2D, k::kDepthwiseConv1D}; }
  std::vector<std::string> kerasClasses() const override { return {"DepthwiseConv2D", "DepthwiseConv1D"}; }
  std::set<std::string> workloadKeys(const std::string&) const override {
    return {"kernel_size", "strides", "padding", "depth_multiplier", "dilation_rate", "use_bias", "activation"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    readConvWindow(l, spec, convRank(spec.kind), false);
    spec.depthMultiplier = l.count32("depth_multiplier", 1, true);
    spec.useBias = l.boolean("use_bias", true);
    readActivation(l, spec, false);
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    spec.kind = cls == "DepthwiseConv1D" ? k::kDepthwiseConv1D : k::kDepthwiseConv2D;
    readConvWindow(c, spec, convRank(spec.kind), false);
    spec.depthMultiplier = readPositive(c, "depth_multiplier", 1);
    // TF 2.x Keras writes its Conv base's keys too.
    c.requireValue("groups", 1, "a depthwise convolution's groups are its channels");
    c.requireNull("filters", "a depthwise convolution has depth_multiplier filters per channel");
    readActivation(c, spec);
    spec.useBias = c.boolean("use_bias", true);
    c.requireInitializer("depthwise_initializer", {"GlorotUniform"});
    c.requireInitializer("bias_initializer", {"Zeros"});
    readPenalties(c, {"depthwise", "bias"});
  }

  // The output channels (channels x depth_multiplier) become spec.units: the bias's size.
  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const int rank = convRank(spec.kind);
    const std::uint64_t channels = convImage(spec, in[0], rank, fail).back();
    const std::uint64_t out = channels * spec.depthMultiplier;
    if (out > 0xffffffffull)
      fail("depth_multiplier", std::to_string(spec.depthMultiplier) + " x " + std::to_string(channels) +
                                   " channels is more than 2^32 - 1 output channels");
    spec.units = std::uint32_t(out);
    return convOutputShape(spec, in[0], rank, out, fail);
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    checkConvLimits(l, std::uint64_t(l.window[0]) * l.window[1] * l.units, "depth_multiplier", batch, fail);
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    // The kernel channels x depth_multiplier (= units) per tap; the kernel gradient reads the input.
    Footprint f{{{"kernel", (long double)l.window[0] * l.window[1] * l.units}}, 0, "input",
                (long double)elementsOf(l.inputShape)};
    if (l.useBias) f.weights.push_back({"bias", l.units});
    return f;
  }
  bool readsShapedInput(const LayerSpec&) const override { return true; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const ConvInput x = convInput(b, l, inputs[0]);
    const std::uint64_t channels = x.image.back();
    const Shape kshape = convRank(l.kind) == 1 ? Shape{l.window[1], channels, l.depthMultiplier}
                                               : Shape{l.window[0], l.window[1], channels, l.depthMultiplier};
    const ConvKernel kernel = convKernels(b, l, {{"kernel", kshape}})[0];
    const std::size_t conv = addConv2D(b.graph(), x.value, kernel.used, windowOf(l), l.name, channels, "depthwise");
    recordConvOp(b, x.value, conv, kernel);
    return convLayerOutput(b, l, conv);
  }
};

}  // namespace

std::unique_ptr<Layer> makeDepthwiseConvLayer() { return std::make_unique<DepthwiseConvLayer>(); }

}  // namespace ipusim::scheduler
