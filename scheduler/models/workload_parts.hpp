#pragma once
// The parts of a workload file with their own rules (workloads/README.md):
// ipusim's own layer list, the optimizer (Keras's names and defaults) and
// the loss. Errors name the file and the key path. Internal to scheduler/.
#include "scheduler/models/workload.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

// ipusim's own model: model.layers (each layer's keys checked; Keras-style
// default names), and, for a model with several inputs or outputs,
// model.inputs ([{"name", "shape"}, ...], two or more) and model.outputs
// (layer names; Workload::outputs, set when two or more).
struct LayerList {
  std::vector<LayerSpec> layers;
  std::vector<ModelInput> inputs;
  std::vector<std::size_t> outputs;
};
LayerList parseLayers(const WorkloadReader& model);
// optimizer: {"type", ...} with Keras's defaults per type.
OptimizerSpec parseOptimizer(const WorkloadReader& optimizer);
// loss: a name, or {"type", "from_logits", "label_smoothing", "delta"}; `top` is the document.
LossSpec parseLoss(const WorkloadReader& top);
// The rules a loss's keys follow, from a workload or a Keras file alike:
// from_logits only on the cross-entropies, label_smoothing in [0, 1] only on
// categorical and binary cross-entropy, delta > 0 only on huber. `given`
// says whether a key was given; fail(key, what) throws.
void checkLossKeys(const LossSpec& loss, const std::function<bool(const std::string&)>& given,
                   const std::function<void(const std::string&, const std::string&)>& fail);

}  // namespace ipusim::scheduler
