#pragma once
// Lowering: the scheduled op graph -> executable IR. Decides every value's
// tile placement (matmuls by their MatMulPlan, elementwise work where its
// input lies, split over the worker contexts with a grain; small tensors on
// one tile), inserts exchanges (Copy into re-placed clones, one broadcast Copy
// for replicas) and compute sets, and records, per tensor, the program steps
// that use it (for the memory plan). Every program step carries the layer and
// op it came from.
#include "model/ir/executable.hpp"
#include "model/target.hpp"
#include "scheduler/op_graph.hpp"
#include "scheduler/schedule.hpp"

namespace ipusim::scheduler {

struct LoweredStep {
  ir::Executable exe;                  // tensors (unplaced addresses), compute sets, programs (no entry points yet)
  std::vector<ir::Id> stepChildren;    // the programs of one training step, in order
  ir::Id images = ir::kNoId, labels = ir::kNoId, loss = ir::kNoId;  // tensors
  std::vector<ir::Id> weightTensors;   // per OpGraph::weights
  // Per tensor: [first, last] index into stepChildren of the programs using it.
  std::vector<std::pair<std::size_t, std::size_t>> useSpan;
  std::uint64_t estimatedStepCycles = 0;  // compute + exchange + syncs of one step (no host transfers)
};

LoweredStep lowerStep(const OpGraph& g, const Schedule& schedule, const model::Target& target,
                      std::uint32_t tiles, std::uint64_t memoryBudget);

}  // namespace ipusim::scheduler
