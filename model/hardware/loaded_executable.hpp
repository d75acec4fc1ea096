#pragma once
// LoadedExecutable: everything load() prepares once so that running is only
// walking programs and waiting: tile memory, compute-set plans (resolved
// vertices + static cycles), exchange plans of every Copy, resolved
// condition scalars, the host streams, the remote buffers and the products
// computed whole.
#include "model/hardware/compute_set_plan.hpp"
#include "model/hardware/exchange_fabric.hpp"
#include "model/hardware/fused_matmul.hpp"
#include "model/hardware/memory_layout.hpp"
#include "model/hardware/renamed_plans_limit.hpp"
#include "model/hardware/streaming_memory.hpp"
#include "model/host_stream.hpp"
#include "model/tile_range.hpp"

#include <memory>
#include <vector>

namespace ipusim::model::hardware {

struct ConditionSlot {  // a RepeatWhileTrue/If condition scalar in tile memory
  const std::uint8_t* data = nullptr;
  ir::DType dtype = ir::DType::Bool;
};

struct StreamCopySlot {  // a StreamCopy program's tensor region, checked
  std::uint64_t bytes = 0;
};

struct LoadedExecutable {
  // fuseMatMuls (functional only): compute the executable's fused products
  // whole (fused_matmul.hpp) instead of tile by tile; the same results.
  // share (functional only): the tiles whose vertices and products are
  // computed outside the collectives (LoadOptions::functionalTiles).
  LoadedExecutable(const ir::Executable& exe, const Target& target, bool functional, bool fuseMatMuls = true,
                   TileRange share = {});

  const ir::Executable& exe;
  const Target& target;
  bool functional;
  MemoryLayout memory;
  std::vector<ComputeSetPlan> computeSets;            // by compute set id
  // Functional only: an Execute renaming tensors (ir::Program::renames) runs
  // its compute set's vertices on the renamed tensors' memory, a plan of its
  // own; its timing is its compute set's (same tiles, shapes and codelets).
  std::vector<ComputeSetPlan> renamedPlans;
  std::vector<ir::Id> renamedPlanOfProgram;           // per program: index into renamedPlans, or kNoId
  std::vector<ExchangePlan> copies;                   // by copy index
  std::vector<ir::Id> copyIndexOfProgram;             // per program: index into copies, or kNoId
  std::vector<ConditionSlot> conditions;              // per program (RepeatWhileTrue, If)
  std::vector<std::unique_ptr<HostStream>> streams;   // by stream id
  StreamingMemory streamingMemory;                    // the remote buffers and their copies
  FusedMatMuls fused;                                 // empty unless functional and fusing
  // Functional with a share of the tiles: a compute set with vertices outside
  // it, run by an Execute that is not a collective's, runs only the share's
  // vertices, a plan of its own (its timing stays its compute set's).
  std::vector<ComputeSetPlan> sharePlans;
  std::vector<ir::Id> sharePlanOfComputeSet;          // per compute set: index into sharePlans, or kNoId

  // The plan whose vertices an Execute runs: its renamed plan, its share's, or its compute set's.
  const ComputeSetPlan& functionalPlan(const ir::Program& execute) const {
    const ir::Id r = execute.id < renamedPlanOfProgram.size() ? renamedPlanOfProgram[execute.id] : ir::kNoId;
    if (r != ir::kNoId) return renamedPlans[r];
    const ir::Id s = execute.computeSet < sharePlanOfComputeSet.size() && !execute.collective
                         ? sharePlanOfComputeSet[execute.computeSet]
                         : ir::kNoId;
    return s == ir::kNoId ? computeSets[execute.computeSet] : sharePlans[s];
  }

  // StaticPhase ids: compute set c is c; copy i is computeSets.size() + i.
  ir::Id copyStaticPhase(ir::Id copyIndex) const { return ir::Id(computeSets.size()) + copyIndex; }
  std::size_t numStaticPhases() const { return computeSets.size() + copies.size(); }

 private:
  void checkRenamedPlans() const;
  void planRenamedExecutes();
  void planShare();
  // `cs` without its vertices outside the share (none removed from a collective's).
  ir::ComputeSet shareOf(ir::ComputeSet cs) const;
  TileRange share_;
};

}  // namespace ipusim::model::hardware
