#pragma once
// The ways out an out-of-memory summary names from what fills its worst tile
// (scheduler/planning/memory_plan.hpp's WorstTile): the techniques of large
// models, each for the share it would shrink.
//
// Contract of peakRemedies(w, exe, worst, capacity): one way for each share
// of the worst tile that is at least an eighth of its memory, the largest
// share first, joined by ", "; empty when none is:
// - the temporaries of matmul and convolution plans live at the peak (their
//   operand copies and partials: lowering/plan_temporaries.hpp): a lower
//   ipu.available_memory_proportion, the share of a tile those plans may use
//   for them (other temporaries, a reduction's sums, are not the plans' to
//   shrink: the summary lists them, no key does);
// - activations live at the peak, where the step already recomputes (else
//   recomputationRemedy names recomputation): checkpoints inside the
//   pipeline's stages, or more checkpoints;
// - always-live weights and their gradient accumulators: more IPUs for the
//   layers (pipeline stages or shards).
// Each names its key, the bytes it would shrink and the largest tensor of
// the share. The optimizer state's ways are optimizerStateRemedies'.
#include "model/ir/executable.hpp"
#include "scheduler/models/workload.hpp"
#include "scheduler/planning/memory_plan.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::scheduler {

std::string peakRemedies(const Workload& w, const ir::Executable& exe, const WorstTile& worst,
                         std::uint64_t capacity);

}  // namespace ipusim::scheduler
