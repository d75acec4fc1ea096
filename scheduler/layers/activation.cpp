// activation (Keras's Activation): the activation alone (TrainingGraphBuilder::
// activation: Relu or NonLinearity ops and their gradients; softmax only
// fused with the loss, on the last layer).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

namespace ipusim::scheduler {
namespace {

class ActivationLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kActivation}; }
  MaskUse maskUse(const LayerSpec&) const override { return MaskUse::Carries; }  // Keras: supports_masking
  std::vector<std::string> kerasClasses() const override { return {"Activation"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"activation"}; }
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override { readActivation(l, spec, true); }
  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kActivation;
    readActivation(c, spec);
  }
  Shape outputShape(LayerSpec&, const std::vector<Shape>& in, const LayerFail&) const override { return in[0]; }
  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    return b.activation(l, l.activation, inputs[0]);
  }
};

}  // namespace

std::unique_ptr<Layer> makeActivationLayer() { return std::make_unique<ActivationLayer>(); }

}  // namespace ipusim::scheduler
