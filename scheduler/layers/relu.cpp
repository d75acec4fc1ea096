// relu (Keras's ReLU layer): Keras's relu with the layer's constants,
// x > threshold ? min(x, max_value) : negative_slope (x - threshold)
// (keras/src/layers/activations/relu.py; the same in TF 2.x's tf.keras).
// The codelets by constants and the gradient: activation_functions.hpp.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {
namespace {

// As Keras's checks: each constant >= 0. A max_value of 0 with a negative
// slope would make the output 0 on both sides of the threshold, which the
// gradient (read from the output) cannot tell apart.
template <class Fail>
void checkRelu(const ActivationParams& p, Fail fail) {
  if (p.maxValue && !(*p.maxValue >= 0)) fail("max_value", nlohmann::json(*p.maxValue).dump() + " is negative (Keras: max_value >= 0 or null)");
  if (!(p.negativeSlope >= 0)) fail("negative_slope", nlohmann::json(p.negativeSlope).dump() + " is negative (Keras: negative_slope >= 0)");
  if (!(p.threshold >= 0)) fail("threshold", nlohmann::json(p.threshold).dump() + " is negative (Keras: threshold >= 0)");
  if (p.maxValue && *p.maxValue == 0 && p.negativeSlope != 0)
    fail("max_value", "0 with a negative_slope is not modelled (the output is 0 above the threshold too)");
}

class ReluLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kRelu}; }
  std::vector<std::string> kerasClasses() const override { return {"ReLU"}; }
  std::set<std::string> workloadKeys(const std::string&) const override {
    return {"max_value", "negative_slope", "threshold"};
  }
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    spec.activation = Activation::Relu;
    if (l.has("max_value") && !l.raw().at("max_value").is_null()) spec.activationParams.maxValue = l.number("max_value", 0);
    spec.activationParams.negativeSlope = l.number("negative_slope", 0);
    spec.activationParams.threshold = l.number("threshold", 0);
    checkRelu(spec.activationParams, [&](const std::string& key, const std::string& what) { l.fail(l.key(key), what); });
  }
  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kRelu;
    spec.activation = Activation::Relu;
    if (c.has("max_value")) spec.activationParams.maxValue = c.number("max_value", 0);
    c.ignore({"max_value"});
    spec.activationParams.negativeSlope = c.number("negative_slope", 0);
    spec.activationParams.threshold = c.number("threshold", 0);
    checkRelu(spec.activationParams, [&](const std::string& key, const std::string& what) { c.fail(key, what); });
  }
  Shape outputShape(LayerSpec&, const std::vector<Shape>& in, const LayerFail&) const override { return in[0]; }
  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    return b.activation(l, l.activation, inputs[0]);
  }
};

}  // namespace

std::unique_ptr<Layer> makeReluLayer() { return std::make_unique<ReluLayer>(); }

}  // namespace ipusim::scheduler
