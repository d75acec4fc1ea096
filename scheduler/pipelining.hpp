#pragma once
// Pipelining: the compiled mini-batch step, cut into stage passes (each
// stage's forward ops and backward ops, on the stage's IPU as sharding places
// them), laid out by a pipeline schedule (pipeline_schedule.hpp) over the N
// mini-batches of one weight update:
// - every mini-batch in flight has its own copy of the step's activations,
//   gradients and stream buffers (mini-batch 0 the compiled tensors, m > 0
//   clones of them, with clones of the stage passes' compute sets and
//   copies); weights and gradient accumulators are shared;
// - the passes of one slot run at once: their programs are merged in
//   lockstep, compute sets into one compute set (a BSP compute phase on
//   every IPU involved, ending in one sync) and copies into one multi-region
//   Copy (one exchange phase; stage-to-stage activations and gradients cross
//   the IPU-Links, timed by the fabric); when the next programs of the passes
//   differ in kind, the more common kind goes first (copies on a tie);
// - each time step ends by adding its backward passes' weight gradients into
//   the accumulators (one compute set), then outfeeds the loss of the
//   mini-batches whose last stage ran; a mini-batch's infeed copies start the
//   time step of its first stage's forward pass;
// - the tensors' lives are the spans of program steps in this order, so the
//   memory plan shares bytes between mini-batches not in flight together:
//   a schedule with fewer mini-batches in flight (Interleaved) needs fewer
//   live activation bytes.
#include "model/ir/executable.hpp"
#include "scheduler/ir_builder.hpp"
#include "scheduler/pipeline_schedule.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::scheduler {

struct PipelineParts {
  std::vector<std::vector<ir::Id>> forward, backward;  // per stage: its ops' Sequences, in schedule order
  ir::Id accumulate = ir::kNoId;           // Execute adding every gradient into its accumulator (gradient_accumulation.hpp)
  std::vector<std::uint32_t> stageOfIpu;   // per IPU of a replica: its stage (or ~0u)
  std::uint32_t tilesPerIpu = 0;
  ir::Id images = ir::kNoId, labels = ir::kNoId, loss = ir::kNoId;  // mini-batch 0's tensors
  ir::Id imagesStream = ir::kNoId, labelsStream = ir::kNoId, lossStream = ir::kNoId;
  bool outfeedEachMiniBatch = true;        // outfeed mode ALL (LAST: the caller copies lastLoss once)
};

struct PipelinedProgram {
  ir::Id program = ir::kNoId;   // Sequence of the N training steps (each marksStep)
  ir::Id lastLoss = ir::kNoId;  // the last mini-batch's loss tensor (kept always live)
};

// Adds the pipelined program to `exe`.
PipelinedProgram buildPipeline(ir::Executable& exe, const PipelinePlan& plan, const PipelineParts& parts);

// Per tensor, the first and last leaf program step (Execute, Copy,
// StreamCopy) using it, walking `roots` in execution order (each once; a
// Repeat's body once): the liveness the memory planner shares bytes by.
std::vector<UseSpan> useSpansInOrder(const ir::Executable& exe, const std::vector<ir::Id>& roots);

}  // namespace ipusim::scheduler
