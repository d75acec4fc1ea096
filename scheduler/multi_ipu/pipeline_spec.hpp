#pragma once
// The workload's `pipeline` key, as TF's IPU pipelining
// (ipu.pipelining_ops.pipeline / Keras set_pipelining_options):
//   "pipeline": {"schedule": "grouped" | "interleaved" | "sequential",
//                "gradient_accumulation_count": N, "device_mapping": [ipu, ...],
//                "recomputation_mode": "Auto" | ...}
// with every layer naming its stage (model.layers[i].stage). The checks and
// their sources (each error names the key and what it needs):
// - stages cover the model in layer order: the first layer is stage 0, each
//   next layer's stage is the same or one more (TF's computational stages
//   each take the previous stage's outputs); at least two stages ("Pipeline
//   requires at least two computational stages.", pipelining_ops.py);
// - device_mapping: one IPU per stage ("Each stage must be mapped to an IPU:
//   %d mappings != %d stages", pipelining_ops.py), default stage i on IPU i;
//   each an IPU of ipu.num_ipus; distinct IPUs (several stages on one IPU are
//   not modelled);
// - gradient_accumulation_count is required ("gradient_accumulation_count
//   must be specified.", pipelining_ops.py); Grouped needs it divisible by
//   2 x stages, Interleaved by the stages (graphcore/tutorials, TF2 Keras
//   tutorial: "When using the grouped schedule,
//   gradient_accumulation_steps_per_replica must be divisible by (number of
//   pipeline stages) * 2. When using the interleaved schedule, ... divisible
//   by (number of pipeline stages)"); Sequential takes any count;
// - it is the training's gradient accumulation: training.gradient_accumulation_count,
//   if given too, must be equal;
// - recomputation_mode (TF's RecomputationMode; giving it is TF's
//   allow_recompute): "Auto", "RecomputeThenBackpropagate" (grouped and
//   interleaved schedules) or "RecomputeAndBackpropagateInterleaved"
//   (grouped and sequential), as pipelining_ops.py documents them.
// parsePipeline() sets each layer's shard to its stage's IPU (so the layers
// are placed as sharding places them) and training.gradientAccumulationCount.
#include "scheduler/models/workload.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {

// Reads top-level "pipeline" (or, without it, refuses any layer's stage).
// Call after the layers, training and ipu.num_ipus are read.
void parsePipeline(const WorkloadReader& top, Workload& w);

}  // namespace ipusim::scheduler
