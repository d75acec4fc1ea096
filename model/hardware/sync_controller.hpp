#pragma once
// SyncController: the BSP barrier between phases.
// - internal sync (the tiles of one IPU): sync.internalCycles;
// - external sync (several IPUs, or an explicit Sync(External), or the end of
//   a host stream copy): sync.externalCycles, and an IPU that reached the
//   barrier early waits for the slowest: that wait is part of its sync phase.
#include "model/ir/program.hpp"
#include "model/target.hpp"

#include <vector>

namespace ipusim::model::hardware {

class SyncController {
 public:
  explicit SyncController(const SyncParams& params) : params_(params) {}
  ir::Cycles cycles(ir::SyncType type) const {
    return type == ir::SyncType::External ? params_.externalCycles : params_.internalCycles;
  }
  // Sync type that closes a compute phase on `ipus` (ascending): external
  // when it spans several IPUs of one graph; with replication (ipusPerReplica
  // k > 0) each replica syncs its own IPUs, so only a replica of several IPUs
  // meeting in the phase needs an external sync.
  static ir::SyncType typeFor(const std::vector<std::uint32_t>& ipus, std::uint32_t ipusPerReplica) {
    if (ipus.size() < 2) return ir::SyncType::Internal;
    if (ipusPerReplica == 0) return ir::SyncType::External;
    for (std::size_t i = 1; i < ipus.size(); ++i)
      if (ipus[i] / ipusPerReplica == ipus[i - 1] / ipusPerReplica) return ir::SyncType::External;
    return ir::SyncType::Internal;
  }
  // Sync phase of an IPU that arrived `arrival` cycles into a phase whose
  // slowest IPU arrived at `slowest`: its wait plus the sync itself.
  ir::Cycles phaseCycles(ir::SyncType type, ir::Cycles arrival, ir::Cycles slowest) const {
    return (slowest - arrival) + cycles(type);
  }

 private:
  SyncParams params_;
};

}  // namespace ipusim::model::hardware
