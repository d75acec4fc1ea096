// conv2d (Keras's Conv2D): NHWC activations, an HWIO kernel [kh, kw, cin,
// filters] (Glorot uniform with Keras's fans: kh kw cin in, kh kw filters
// out; cast to the compute type under mixed_float16), a bias per filter,
// TF's `same` arithmetic (window.hpp). The ops and their gradients:
// conv_layers.hpp (Conv2D, Conv2DInputGrad, Conv2DWeightGrad), planned and
// lowered as poplin does (planning/conv_plan.hpp, lowering/conv_lowering.hpp).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/conv_layers.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/workload_limits.hpp"

namespace ipusim::scheduler {
namespace {

class Conv2DLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kConv2D}; }
  std::vector<std::string> kerasClasses() const override { return {"Conv2D"}; }
  std::set<std::string> workloadKeys(const std::string&) const override {
    return {"filters", "kernel_size", "strides", "padding", "use_bias", "activation"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("filters")) l.fail(l.key("filters"), "missing (expected a positive integer)");
    spec.units = l.count32("filters", 0, true);
    readWindow(l, spec, "kernel_size", false);
    spec.useBias = l.boolean("use_bias", true);
    readActivation(l, spec, false);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kConv2D;
    const std::int64_t filters = c.integer("filters", 0);
    if (filters <= 0 || filters > 0xffffffffll)
      c.fail("filters", "expected a positive integer, got " + c.at("filters").dump());
    spec.units = std::uint32_t(filters);
    readWindow(c, spec, "kernel_size", false);
    c.requireValue("dilation_rate", 1, "dilated convolutions");
    c.requireValue("groups", 1, "grouped convolutions");
    readKernelAndBias(c, spec);
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    return windowedShape(spec, in[0], "kernel_size", spec.units, fail);
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    // kernel rows x columns x input channels x filters; the output, batch x height x width x filters.
    constexpr std::uint64_t kFloat = 4;
    const std::string filters = std::to_string(l.units);
    const WideCount weights = WideCount(l.window[0]) * l.window[1] * l.inputShape.back() * l.units * kFloat;
    if (weights > kMaxTensorBytes)
      fail("filters", filters + " needs " + wideText(weights) + " bytes of float kernel; " + tensorLimitText());
    const WideCount activations = WideCount(batch) * elementsOf(l.outputShape) * kFloat;
    if (activations > kMaxTensorBytes)
      fail("filters", filters + " needs " + wideText(activations) + " bytes of float activations (batch " +
                          std::to_string(batch) + "); " + tensorLimitText());
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    const long double kernel = (long double)l.window[0] * l.window[1] * l.inputShape.back() * l.units;
    Footprint f{{{"kernel", kernel}}, 0, "input", (long double)elementsOf(l.inputShape)};
    if (l.useBias) f.weights.push_back({"bias", l.units});
    return f;  // the kernel gradient reads the input
  }
  bool readsShapedInput(const LayerSpec&) const override { return true; }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const std::size_t x = b.shaped(inputs[0], l.inputShape, l.name, "reshape_input");
    const std::uint64_t channels = l.inputShape.back(), field = std::uint64_t(l.window[0]) * l.window[1];
    const std::size_t kernel = b.weight(l, "kernel", {l.window[0], l.window[1], channels, l.units},
                                        [&] { return b.glorotUniform(field * channels, field * l.units); });
    const std::size_t kernelUsed = b.cast(kernel, b.compute(), l.name + "/kernel_cast", l.name, ValueKind::Activation);
    const std::size_t conv = addConv2D(b.graph(), x, kernelUsed, windowOf(l), l.name);
    const std::size_t convOp = b.graph().ops.size() - 1;
    b.record({x}, conv, true, [&b, x, kernel, convOp](const Backward& bw) {
      const Conv2DGradients grads = addConv2DGrad(b.graph(), convOp, bw.grad, bw.wants(x), b.variables());
      bw.weightGradient(kernel, grads.kernel);
      if (bw.wants(x)) bw.deliver(x, grads.input);
    });
    return b.activation(l, l.activation, b.bias(l, conv));
  }
};

}  // namespace

std::unique_ptr<Layer> makeConv2DLayer() { return std::make_unique<Conv2DLayer>(); }

}  // namespace ipusim::scheduler
