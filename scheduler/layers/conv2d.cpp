// conv2d, conv1d (Keras's Conv2D, Conv1D): NHWC activations (a 1-D layer's
// steps x channels as one row, conv_keys.hpp), an HWIO kernel [kh, kw,
// channels / groups, filters] ([k, channels / groups, filters] for 1-D; Glorot
// uniform with Keras's fans; cast to the compute type under mixed_float16),
// a bias per filter; strides, dilation_rate, groups (output channel f reads
// the input channels of group f / (filters / groups)), padding valid, same
// (TF's arithmetic, window.hpp) or, for 1-D, causal. The ops and their
// gradients: conv_layers.hpp (Conv2D, Conv2DInputGrad, Conv2DWeightGrad),
// planned and lowered as poplin does, grouped convolutions in conv groups
// (planning/conv_plan.hpp, lowering/conv_lowering.hpp).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/conv_keys.hpp"
#include "scheduler/layers/conv_layer_build.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

class ConvLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {k::kConv2D, k::kConv1D}; }
  std::vector<std::string> kerasClasses() const override { return {"Conv2D", "Conv1D"}; }
  std::set<std::string> workloadKeys(const std::string&) const override {
    return {"filters", "kernel_size", "strides", "padding", "dilation_rate", "groups", "use_bias", "activation"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("filters")) l.fail(l.key("filters"), "missing (expected a positive integer)");
    spec.units = l.count32("filters", 0, true);
    const int rank = convRank(spec.kind);
    readConvWindow(l, spec, rank, rank == 1);
    spec.groups = l.count32("groups", 1, true);
    spec.useBias = l.boolean("use_bias", true);
    readActivation(l, spec, false);
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    spec.kind = cls == "Conv1D" ? k::kConv1D : k::kConv2D;
    spec.units = readPositive(c, "filters", 0);
    const int rank = convRank(spec.kind);
    readConvWindow(c, spec, rank, rank == 1);
    // TF 2.x Keras's Conv reads `groups or 1`; Keras 3 compares None with 0 and fails.
    if (c.isNull("groups") && c.format() == "tf2") c.ignore({"groups"});
    else spec.groups = readPositive(c, "groups", 1);
    readKernelAndBias(c, spec);
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const int rank = convRank(spec.kind);
    const std::uint64_t channels = convImage(spec, in[0], rank, fail).back();
    if (channels % spec.groups)
      fail("groups", std::to_string(spec.groups) + " does not divide the input's " + std::to_string(channels) +
                         " channels (input " + shapeText(in[0]) + ")");
    if (spec.units % spec.groups)
      fail("groups", std::to_string(spec.groups) + " does not divide the " + std::to_string(spec.units) + " filters");
    return convOutputShape(spec, in[0], rank, spec.units, fail);
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    // kernel rows x columns x input channels per group x filters
    checkConvLimits(l, std::uint64_t(l.window[0]) * l.window[1] * (l.inputShape.back() / l.groups) * l.units,
                    "filters", batch, fail);
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    const long double kernel = (long double)l.window[0] * l.window[1] * (l.inputShape.back() / l.groups) * l.units;
    Footprint f{{{"kernel", kernel}}, 0, "input", (long double)elementsOf(l.inputShape)};
    if (l.useBias) f.weights.push_back({"bias", l.units});
    return f;  // the kernel gradient reads the input
  }
  bool readsShapedInput(const LayerSpec&) const override { return true; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const ConvInput x = convInput(b, l, inputs[0]);
    const std::uint64_t perGroup = x.image.back() / l.groups;
    const Shape kshape = convRank(l.kind) == 1 ? Shape{l.window[1], perGroup, l.units}
                                               : Shape{l.window[0], l.window[1], perGroup, l.units};
    const ConvKernel kernel = convKernels(b, l, {{"kernel", kshape}})[0];
    const std::size_t conv = addConv2D(b.graph(), x.value, kernel.used, windowOf(l), l.name, l.groups);
    recordConvOp(b, x.value, conv, kernel);
    return convLayerOutput(b, l, conv);
  }
};

}  // namespace

std::unique_ptr<Layer> makeConv2DLayer() { return std::make_unique<ConvLayer>(); }

}  // namespace ipusim::scheduler
