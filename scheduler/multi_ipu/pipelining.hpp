#pragma once
// Pipelining: the compiled mini-batch step, cut into stage passes (each
// stage's forward ops and backward ops, on the stage's IPU as sharding places
// them), laid out by a pipeline schedule (pipeline_schedule.hpp) over the N
// mini-batches of one weight update:
// - every mini-batch in flight has its own copy of the step's activations,
//   gradients and stream buffers (mini-batch 0 the compiled tensors, m > 0
//   clones of them, with clones of the stage passes' compute sets and
//   copies); weights and gradient accumulators are shared. (A limit: the
//   host holds N x the step's vertices, 222 M for BERT-Large at micro-batch
//   8. Poplar runs one program per stage and stashes each mini-batch's
//   activations in FIFOs instead; doing so here needs a liveness of several
//   intervals per tensor, which the memory plan's one span cannot say.)
// - Grouped and Interleaved: the passes of one slot run at once, in one
//   ir::Program::ipusApart Sequence: each IPU runs its pass's compute sets
//   (closed by internal syncs) and copies on its own clock, as Poplar runs
//   every IPU's program between the syncs that join IPUs, and the IPUs meet
//   in an external sync at the slot's end (an IPU whose pass is shorter
//   waits in it; one with no pass is idle). A pass reads only its own IPU's
//   tensors: what it needs from another stage (its input activation, the
//   activation its weight gradient needs, the gradient coming back) is
//   copied to its IPU once, laid out tile by tile as the original, by the
//   slot where the stage first reads it (the inter-IPU copies of all the
//   slot's passes merged into one Copy that opens the slot: one exchange
//   over the IPU-Links joining the IPUs, timed by the fabric), and the
//   stage's later passes of that mini-batch read the same copy (TF keeps a
//   stage's inputs on its IPU for the backward pass). A backward pass ends
//   by adding its weight gradients into its stage's accumulators. The
//   weight updates after the N mini-batches run apart the same way;
// - Sequential: one pass per slot, its programs in order as sharding runs
//   them (reading other IPUs' tensors over the links where they are); each
//   time step ends by adding its backward passes' weight gradients into the
//   accumulators (one compute set across the IPUs, closed by an external
//   sync), and the updates run one after another;
// - each time step outfeeds the loss of the mini-batches whose last stage
//   ran; a mini-batch's infeed copies start the time step of its first
//   stage's forward pass;
// - the tensors' lives are the spans of program steps in this order, so the
//   memory plan shares bytes between mini-batches not in flight together:
//   a schedule with fewer mini-batches in flight (Interleaved) needs fewer
//   live activation bytes.
#include "model/ir/executable.hpp"
#include "scheduler/lowering/ir_builder.hpp"
#include "scheduler/multi_ipu/pipeline_schedule.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::scheduler {

// Evaluate and predict (a forward-only plan: forwardOnly()) have no backward
// ops, no accumulate, zero or updates; predict no labels.
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
  std::string outfeedName = "loss";        // the outfeed copies' name ("predictions" in predict)
  // Grouped and Interleaved: the slots' passes, gradient additions and
  // updates run side by side, each IPU on its own clock; Sequential runs them
  // as sharding does (one addition across the IPUs, the updates one after
  // another).
  bool sideBySide = true;
};

struct PipelinedProgram {
  ir::Id program = ir::kNoId;   // Sequence of the N training steps (each marksStep)
  ir::Id apply = ir::kNoId;     // Sequence: the updates (IPUs apart, or one after another), then the zeroing (none without updates)
  ir::Id lastLoss = ir::kNoId;  // the last mini-batch's loss tensor (kept always live)
};

// Adds the pipelined program to `exe`.
PipelinedProgram buildPipeline(ir::Executable& exe, const PipelinePlan& plan, const PipelineParts& parts);

// What each mini-batch in flight after the first lays out in host memory:
// its own copies of the tensors and their tile intervals, its passes'
// programs and their renames of the tensors (its compute sets and copies are
// its stage's, renamed: ir::Program::renames). The compiler holds
// (mini-batches - 1) x their weighted sum to kMaxPipelineCopyItems before
// building (checkPipelineCopies).
// renamedWork: what functional mode then plans for each of those mini-batches
// (model/hardware/renamed_plans_limit.hpp): the vertices of its renamed
// Executes (its passes' and its gradients' additions) and the regions of
// its Copies, as LoadedExecutable counts them (checkFunctionalPipeline).
struct PipelineCopyItems {
  std::uint64_t tensorIntervals = 0, tensorRenames = 0, tensors = 0, programs = 0;
  std::uint64_t renamedWork = 0;
};
PipelineCopyItems pipelineItemsPerMiniBatch(ir::Executable& exe, const PipelineParts& parts);

// Per tensor, the first and last leaf program step (Execute, Copy,
// StreamCopy) using it, walking `roots` in execution order (each once; a
// Repeat's body once): the liveness the memory planner shares bytes by.
std::vector<UseSpan> useSpansInOrder(const ir::Executable& exe, const std::vector<ir::Id>& roots);

}  // namespace ipusim::scheduler
