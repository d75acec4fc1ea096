#pragma once
// The pipeline schedules of TF's IPU pipelining (PipelineSchedule), as the
// order in which stage passes run: which forward (F) and backward (B) passes
// of which mini-batches run together, on their stages' IPUs, in one BSP slot.
// S stages, N mini-batches (the gradient accumulation count); F_s(m) / B_s(m)
// is stage s's forward / backward pass of mini-batch m.
//
// - Grouped (TF's default: "at any given point in time, the pipelined stages
//   are either all running their forward pass or all running their backward
//   pass"): time step t has a forward slot {F_s(t - s)} then a backward slot
//   {B_s(t - 2(S-1) + s)} (each where 0 <= m < N). The last stage runs its
//   backward right after its forward of the same mini-batch; the backward
//   passes flow back one stage per step. Ramp-up: steps 0..S-2 have
//   forwards only; ramp-down: the last S-1 steps backwards only. With every
//   stage's F and B taking the same time, each IPU is idle (S-1)(F+B) of
//   (N+S-1)(F+B): the share (S-1)/(N+S-1). Stage s keeps 2(S-1-s)+1
//   mini-batches' activations in flight.
// - Interleaved ("forward and backward passes in an alternating pattern"):
//   slot u runs F_s(m) where u = 2m + s and B_s(m) where u = 2m + 2S-1-s:
//   each IPU alternates F and B, so stage s keeps only S-s mini-batches in
//   flight, but a slot lasts as long as its slowest pass (a B beside an F).
// - Sequential (stages "serialised so only one stage is being executed at any
//   given point in time", as sharding): F_0(m)..F_{S-1}(m), B_{S-1}(m)..B_0(m),
//   one slot each, mini-batch after mini-batch.
// Sources: the TF1 pipelining tutorial (graphcore/tutorials,
// tutorials/tensorflow1/pipelining/README.md, "Scheduling") and the TF model
// parallelism technical note ("Pipeline scheduling").
#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct StagePass {
  std::uint32_t stage = 0, miniBatch = 0;
  bool backward = false;
  bool operator==(const StagePass& o) const {
    return stage == o.stage && miniBatch == o.miniBatch && backward == o.backward;
  }
};

// Passes that run at once, on different IPUs.
using PipelineSlot = std::vector<StagePass>;

// A time step of the schedule: its slots in order. The gradients of the
// backward passes of a time step are accumulated at its end, mini-batches
// enter (infeed) at the start of the time step of their F_0 and leave
// (outfeed of the loss) at the end of the time step of their F_{S-1}.
struct PipelineTimeStep {
  std::vector<PipelineSlot> slots;
};

struct PipelinePlan {
  std::vector<PipelineTimeStep> timeSteps;
  // The first time step of each of the N training steps (steps tile the time
  // steps: step m runs from firstTimeStep[m] to the next one's, the last to the end).
  std::vector<std::size_t> firstTimeStep;
};

// `schedule`: grouped | interleaved | sequential; stages >= 1, miniBatches >= 1.
PipelinePlan planPipeline(const std::string& schedule, std::uint32_t stages, std::uint32_t miniBatches);

// The plan's forward passes alone, in their slots (evaluate and predict run
// no backward pass): slots and time steps left empty are dropped, so
// Grouped's ramp-down goes; Interleaved keeps its alternation, each IPU's
// forward passes two slots apart.
PipelinePlan forwardOnly(const PipelinePlan& plan);

}  // namespace ipusim::scheduler
