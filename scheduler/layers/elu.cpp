// elu (Keras's ELU): x > 0 ? x : alpha (exp(x) - 1), alpha 1 by default.
// Keras 3's ELU.get_config does not write alpha, so a Keras 3 file's ELU is
// read with alpha 1, as Keras itself reloads it; TF 2.x writes it. Its codelet
// and gradient: activation_functions.hpp.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {
namespace {

// The gradient reads the output (y > 0 exactly when x > 0), which needs
// alpha >= 0 (Keras's docs define ELU for alpha > 0).
const char* kNegativeAlpha = " is negative: not modelled (ELU is defined for alpha >= 0)";

class EluLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kElu}; }
  std::vector<std::string> kerasClasses() const override { return {"ELU"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"alpha"}; }
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    spec.activation = Activation::Elu;
    spec.activationParams.alpha = l.number("alpha", 1.0);
    if (!(spec.activationParams.alpha >= 0)) l.fail(l.key("alpha"), nlohmann::json(spec.activationParams.alpha).dump() + kNegativeAlpha);
  }
  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kElu;
    spec.activation = Activation::Elu;
    spec.activationParams.alpha = c.number("alpha", 1.0);
    if (!(spec.activationParams.alpha >= 0)) c.fail("alpha", nlohmann::json(spec.activationParams.alpha).dump() + kNegativeAlpha);
  }
  Shape outputShape(LayerSpec&, const std::vector<Shape>& in, const LayerFail&) const override { return in[0]; }
  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    return b.activation(l, l.activation, inputs[0]);
  }
};

}  // namespace

std::unique_ptr<Layer> makeEluLayer() { return std::make_unique<EluLayer>(); }

}  // namespace ipusim::scheduler
