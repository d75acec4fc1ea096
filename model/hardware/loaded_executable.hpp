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
#include "model/hardware/streaming_memory.hpp"
#include "model/host_stream.hpp"

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
  LoadedExecutable(const ir::Executable& exe, const Target& target, bool functional, bool fuseMatMuls = true);

  const ir::Executable& exe;
  const Target& target;
  bool functional;
  MemoryLayout memory;
  std::vector<ComputeSetPlan> computeSets;            // by compute set id
  std::vector<ExchangePlan> copies;                   // by copy index
  std::vector<ir::Id> copyIndexOfProgram;             // per program: index into copies, or kNoId
  std::vector<ConditionSlot> conditions;              // per program (RepeatWhileTrue, If)
  std::vector<std::unique_ptr<HostStream>> streams;   // by stream id
  StreamingMemory streamingMemory;                    // the remote buffers and their copies
  FusedMatMuls fused;                                 // empty unless functional and fusing

  // StaticPhase ids: compute set c is c; copy i is computeSets.size() + i.
  ir::Id copyStaticPhase(ir::Id copyIndex) const { return ir::Id(computeSets.size()) + copyIndex; }
  std::size_t numStaticPhases() const { return computeSets.size() + copies.size(); }
};

}  // namespace ipusim::model::hardware
