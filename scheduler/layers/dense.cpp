// dense (Keras's Dense): out = activation(in . kernel + bias) on the last
// axis. A MatMul reads an NHWC input after a flatten as [batch, height x
// width x channels]; on an input of rank > 1 (a sequence) every row of the
// last axis is a row of the product: the value reshaped to [rows, features]
// and the result back. Kernel [features, units] Glorot uniform (Keras's
// fans), cast to the compute type under mixed_float16; bias zeros
// (layers/dense_product.hpp, with the backward pass).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/dense_product.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/workload_limits.hpp"

namespace ipusim::scheduler {
namespace {

class DenseLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kDense}; }
  MaskUse maskUse(const LayerSpec&) const override { return MaskUse::Carries; }  // Keras: supports_masking
  std::vector<std::string> kerasClasses() const override { return {"Dense"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"units", "activation", "use_bias"}; }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (!l.has("units")) l.fail(l.key("units"), "missing (expected a positive integer)");
    spec.units = l.count32("units", 0, true);
    readActivation(l, spec, false);
    spec.useBias = l.boolean("use_bias", true);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kDense;
    spec.units = c.count32("units");
    readKernelAndBias(c, spec);
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail&) const override {
    Shape out = in[0];
    out.back() = spec.units;  // Keras's Dense works on the last axis
    return out;
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    constexpr std::uint64_t kFloat = 4;
    const std::uint64_t fanIn = l.inputShape.back();
    const std::string units = std::to_string(l.units);
    const WideCount weights = WideCount(fanIn) * l.units * kFloat;
    if (weights > kMaxTensorBytes)
      fail("units", units + " needs " + wideText(weights) + " bytes of float weights (fan-in " + std::to_string(fanIn) +
                        "); " + tensorLimitText() + ": at most " + std::to_string(kMaxTensorBytes / (fanIn * kFloat)));
    const std::uint64_t rows = elementsOf(l.inputShape) / fanIn;
    const WideCount activations = WideCount(batch) * rows * l.units * kFloat;
    if (activations > kMaxTensorBytes)
      fail("units", units + " needs " + wideText(activations) + " bytes of float activations (batch " +
                        std::to_string(batch) + "); " + tensorLimitText() + ": at most " +
                        std::to_string(kMaxTensorBytes / (std::uint64_t(batch) * kFloat)));
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    Footprint f{{{"kernel", (long double)l.inputShape.back() * l.units}}, 0, "input", (long double)elementsOf(l.inputShape)};
    if (l.useBias) f.weights.push_back({"bias", l.units});
    return f;  // the kernel gradient reads the input
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const std::uint64_t features = l.inputShape.back();
    const std::uint64_t rows = b.batch() * (elementsOf(l.inputShape) / features);
    std::size_t x = inputs[0];
    if (l.inputShape.size() > 1) x = b.reshape(x, {rows, features}, l.name, "rows");
    std::size_t y = addDenseProduct(b, l, x, {rows, features, l.units, features, l.units, {}, {}});
    if (l.inputShape.size() > 1) y = b.shaped(y, l.outputShape, l.name, "unrows");
    return b.activation(l, l.activation, y);
  }
};

}  // namespace

std::unique_ptr<Layer> makeDenseLayer() { return std::make_unique<DenseLayer>(); }

}  // namespace ipusim::scheduler
