#pragma once
// ReplicaMirror: identical replicas described once (timing-only runs).
//
// A replicated executable normally lays every replica out in full: R copies
// of every vertex and copy region (scheduler/multi_ipu/replication.hpp). In timing-only
// mode nothing reads a replica's numbers, and replicas run the same program
// with data-independent timing, so the compiler may keep ONE replica's work
// instead: the compute sets and Copy programs flagged here hold replica 0's
// vertices / regions only and stand for every replica's, replica k's being
// replica 0's moved by k x tilesPerReplica tiles (k x ipusPerReplica IPUs) at
// the same addresses. Everything that differs between replicas stays in full:
// the tensors' mappings, the host streams (every replica's slice) and the
// cross-replica collectives (their compute sets and Copies are not flagged).
//
// The machine model expands a flagged phase's per-tile and per-IPU timing to
// every replica at load() (compute_set_plan.hpp, exchange_fabric.hpp) and
// times IPU-Link traffic over the expanded flows, so every phase lasts what
// the full layout's lasts (tests/scheduler/replica_mirror_test.cpp). A
// mirrored executable cannot compute (functional mode refuses it) and is
// not serialized (toJson refuses it).
#include "model/ir/types.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::ir {

struct ReplicaMirror {
  std::uint32_t replicas = 0;         // 0 or 1: nothing mirrored
  std::uint32_t tilesPerReplica = 0;  // replica k's tile = replica 0's + k x tilesPerReplica
  std::vector<bool> computeSets;      // by compute set id: holds replica 0's vertices only
  std::vector<bool> copies;           // by program id: a Copy of replica 0's regions only

  bool active() const { return replicas > 1; }
  bool computeSet(Id id) const { return active() && id < computeSets.size() && computeSets[id]; }
  bool copy(Id program) const { return active() && program < copies.size() && copies[program]; }
};

}  // namespace ipusim::ir
