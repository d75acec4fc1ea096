#pragma once
// Gradient accumulation without pipelining, as TF's
// GradientAccumulationOptimizerV2: every weight gradient the updates read
// (plain SGD's ScaledAdd `deltas`, a fused rule's `grad`)
// gets an always-live accumulator (mapped as the gradient, zero at load);
// each mini-batch adds its gradient into it (ScaledAdd, scale 1, on the
// tiles that hold it), and the updates, run once per N mini-batches, read
// the accumulator (the sum of the N gradients: TF's default reduction
// method, GradientAccumulationReductionMethod.SUM) and then zero it (Fill 0).
#include "model/ir/executable.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct GradientAccumulation {
  ir::Id accumulate = ir::kNoId;  // Execute: accumulators += gradients (every mini-batch)
  ir::Id zero = ir::kNoId;        // Execute: accumulators = 0 (after the updates)
  std::vector<ir::Id> accumulators;
};

// Adds the accumulators, redirects the update vertices of `updateSequences`
// to them and returns the two programs to place. Run before the memory plan
// (the caller gives the accumulators always-live spans).
GradientAccumulation accumulateGradients(ir::Executable& exe, const std::vector<ir::Id>& updateSequences,
                                         std::uint32_t workerContexts);

// An Execute of `vertices` (additions into or zeroing of accumulators), debug
// layer "training", op "gradient_accumulation" (a pipeline's per-pass additions).
ir::Id addAccumulationExecute(ir::Executable& exe, const std::string& name, std::vector<ir::Vertex> vertices);

}  // namespace ipusim::scheduler
