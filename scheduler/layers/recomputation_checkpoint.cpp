// recomputation_checkpoint (TF's ipu.keras.layers.RecomputationCheckpoint):
// passes its input through unchanged, and marks the value as one the
// backward pass keeps: the layer whose output it reads becomes a
// recomputation checkpoint (training.recompute_checkpoints, which the
// workload reader fills from these layers when it is not given:
// checkpointsFromLayers in models/workload.cpp; graph/recomputation.hpp).
// In a pipeline it cuts a stage's recomputation only under
// pipeline.recomputation_mode RecomputeAndBackpropagateInterleaved, as in
// TF; otherwise it has no effect, and the compile says so.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/keras_config.hpp"

namespace ipusim::scheduler {
namespace {

class RecomputationCheckpointLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kRecomputationCheckpoint}; }
  std::vector<std::string> kerasClasses() const override { return {"RecomputationCheckpoint"}; }
  MaskUse maskUse(const LayerSpec&) const override { return MaskUse::Carries; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {}; }
  void readWorkload(const WorkloadReader&, LayerSpec&) const override {}
  void readKeras(KerasConfig&, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kRecomputationCheckpoint;
  }
  Shape outputShape(LayerSpec&, const std::vector<Shape>& in, const LayerFail&) const override { return in[0]; }
  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    const PipelineSpec& pipeline = b.workload().pipeline;
    if (pipeline.enabled() && b.training() && pipeline.recomputationMode != kRecomputeAndBackpropagateInterleaved)
      b.graph().warnings.push_back(
          "layer '" + l.name + "' (RecomputationCheckpoint): " +
          (pipeline.recomputes() ? "no effect with pipeline.recomputation_mode \"" + pipeline.recomputationMode +
                                       "\" (TF's RecomputationMode: only \"" + kRecomputeAndBackpropagateInterleaved +
                                       "\" takes checkpoints)"
                                 : std::string("the pipeline recomputes nothing (no pipeline.recomputation_mode)")) +
          "; the layer passes its input through");
    return inputs[0];
  }
};

}  // namespace

std::unique_ptr<Layer> makeRecomputationCheckpointLayer() { return std::make_unique<RecomputationCheckpointLayer>(); }

}  // namespace ipusim::scheduler
