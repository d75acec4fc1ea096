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
//   every IPU involved, each IPU's part closed by its internal sync:
//   ir::ComputeSet::independentPerIpu) and copies into one multi-region
//   Copy (one exchange phase; stage-to-stage activations and gradients cross
//   the IPU-Links, timed by the fabric). Which programs go together is an
//   alignment of the passes' program lists (each kept in order) that
//   minimises the slot's estimated cycles, a merged phase costing its
//   slowest part: the BSP machine then runs the passes side by side as far
//   as their phases allow (pass by pass, each next pass aligned with the
//   ones before);
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
#include <map>
#include <vector>

namespace ipusim::scheduler {

struct PipelineParts {
  std::vector<std::vector<ir::Id>> forward, backward;  // per stage: its ops' Sequences, in schedule order
  ir::Id accumulate = ir::kNoId;           // Execute adding every gradient into its accumulator (gradient_accumulation.hpp)
  ir::Id zero = ir::kNoId;                 // Execute zeroing the accumulators
  std::vector<std::vector<ir::Id>> updates;  // per stage: its weights' update op Sequences (reading the accumulators)
  std::vector<std::uint32_t> stageOfIpu;   // per IPU of a replica: its stage (or ~0u)
  std::uint32_t tilesPerIpu = 0;
  ir::Id images = ir::kNoId, labels = ir::kNoId, loss = ir::kNoId;  // mini-batch 0's tensors
  ir::Id imagesStream = ir::kNoId, labelsStream = ir::kNoId, lossStream = ir::kNoId;
  bool outfeedEachMiniBatch = true;        // outfeed mode ALL (LAST: the caller copies lastLoss once)
  std::map<ir::Id, ir::Cycles> programCycles;  // the op programs' estimated cycles (LoweredStep::programCycles)
  // Grouped and Interleaved: the IPUs' gradient additions and updates run
  // side by side (each IPU's own); Sequential runs them as sharding does (one
  // addition across the IPUs, the updates one after another).
  bool sideBySide = true;
};

struct PipelinedProgram {
  ir::Id program = ir::kNoId;   // Sequence of the N training steps (each marksStep)
  ir::Id apply = ir::kNoId;     // Sequence: the updates (each IPU's side by side), then the accumulators zeroed
  ir::Id lastLoss = ir::kNoId;  // the last mini-batch's loss tensor (kept always live)
};

// Adds the pipelined program to `exe`.
PipelinedProgram buildPipeline(ir::Executable& exe, const PipelinePlan& plan, const PipelineParts& parts);

// Per tensor, the first and last leaf program step (Execute, Copy,
// StreamCopy) using it, walking `roots` in execution order (each once; a
// Repeat's body once): the liveness the memory planner shares bytes by.
std::vector<UseSpan> useSpansInOrder(const ir::Executable& exe, const std::vector<ir::Id>& roots);

}  // namespace ipusim::scheduler
