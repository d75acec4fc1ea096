// leaky_relu (Keras's LeakyReLU): x > 0 ? x : negative_slope x, the slope
// 0.3 by default (Keras 3's negative_slope; TF 2.x writes it `alpha`, which
// Keras 3 still reads and prefers). Its codelet and gradient:
// activation_functions.hpp (the leaky_relu activation, whose slope is 0.2).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {
namespace {

constexpr double kDefaultSlope = 0.3;  // keras/src/layers/activations/leaky_relu.py

class LeakyReluLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kLeakyRelu}; }
  std::vector<std::string> kerasClasses() const override { return {"LeakyReLU"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"negative_slope"}; }
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    spec.activation = Activation::LeakyRelu;
    spec.activationParams.negativeSlope = l.number("negative_slope", kDefaultSlope);
    if (!(spec.activationParams.negativeSlope >= 0))
      l.fail(l.key("negative_slope"), nlohmann::json(spec.activationParams.negativeSlope).dump() + " is negative (Keras: >= 0)");
  }
  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kLeakyRelu;
    spec.activation = Activation::LeakyRelu;
    // Keras 3 pops `alpha` over negative_slope (even a None one, which it then refuses, as TF 2.x does).
    const char* key = c.has("alpha") || c.isNull("alpha") ? "alpha" : "negative_slope";
    c.ignore({"alpha", "negative_slope"});
    spec.activationParams.negativeSlope = c.number(key, kDefaultSlope);
    if (!(spec.activationParams.negativeSlope >= 0))
      c.fail(key, nlohmann::json(spec.activationParams.negativeSlope).dump() + " is negative (Keras: >= 0)");
  }
  Shape outputShape(LayerSpec&, const std::vector<Shape>& in, const LayerFail&) const override { return in[0]; }
  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    return b.activation(l, l.activation, inputs[0]);
  }
};

}  // namespace

std::unique_ptr<Layer> makeLeakyReluLayer() { return std::make_unique<LeakyReluLayer>(); }

}  // namespace ipusim::scheduler
