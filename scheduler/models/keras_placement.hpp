#pragma once
// Where a Keras file's layers run: the workload's model.shards and
// model.stages, which say for a Keras model what ipusim's own layer list
// says with each layer's `shard` and `stage`. Each is a list of layer names
// of the file, the first layer of each shard (stage) in the file's layer
// order: shard k runs from the k-th name's layer up to the next name's. A
// split in layer order is how Graphcore's BERT configs place layers
// (layers_per_ipu); its Keras API assigns a stage to each layer call
// (set_pipeline_stage_assignment), which a split in layer order also gives.
#include "scheduler/models/workload.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {

// Sets each layer's shard (or stage) from `model`'s "shards" (or "stages");
// fails naming the key and the name on an unknown layer, a name out of
// order, a first name that is not the first layer, both keys, or stages
// without the workload's pipeline key (`pipelined`) and shards with it.
void placeKerasLayers(const WorkloadReader& model, bool pipelined, Workload& w);

}  // namespace ipusim::scheduler
