#pragma once
// The parts of a workload file with their own rules (workloads/README.md):
// ipusim's own layer list, the optimizer (Keras's names and defaults) and
// the loss. Errors name the file and the key path. Internal to scheduler/.
#include "scheduler/models/workload.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <vector>

namespace ipusim::scheduler {

// model.layers: each layer's keys checked; Keras-style default names.
std::vector<LayerSpec> parseLayers(const WorkloadReader& model);
// optimizer: {"type", ...} with Keras's defaults per type.
OptimizerSpec parseOptimizer(const WorkloadReader& optimizer);
// loss: a name, or {"type", "from_logits"}; `top` is the document.
LossSpec parseLoss(const WorkloadReader& top);

}  // namespace ipusim::scheduler
