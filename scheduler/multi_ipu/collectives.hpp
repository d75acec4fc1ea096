#pragma once
// Cross-replica collectives as BSP steps over the IPU-Link fabric, as
// Graphcore's GCL builds them: each step is one exchange (a Copy of every
// replica's piece at once, timed by the fabric) and, for a reduction, one
// compute set adding what arrived.
//
// A replicated tensor holds R copies, one per replica: replica r's copy is
// elements [r * n, (r + 1) * n), mapped over replica r's tiles.
//
// All-reduce (sum): a ring over the replicas in `ring` order, each copy cut
// into R chunks. Reduce-scatter: R - 1 steps; in step s, the replica at ring
// position p sends chunk (p - s) mod R to position p + 1, which adds it into
// its own copy (ScaledAdd with scale 1 on the tiles that hold the chunk: one
// ScaledAddSupervisor where a tile holds a single piece of it, as popops does).
// Replica p then holds the sum of chunk (p + 1) mod R. All-gather: R - 1
// steps passing the summed chunks on, written in place. Each replica sends
// 2 (R - 1) / R of its copy in all, the ring's optimum. `received` is a
// buffer mapped as `data` (where the chunks arrive before they are added).
//
// Broadcast: one exchange from the root replica's copy to every other.
#include "model/ir/executable.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct CollectiveStep {
  std::string what;                        // "reduce_scatter/0", "all_gather/2", "broadcast"
  std::vector<ir::CopyRegion> copy;        // one exchange phase
  std::vector<ir::Vertex> vertices;        // one compute set after it (may be empty)
};

// A ring of `n` replicas (replica r on IPU r of the ladder) whose every step
// is one IPU-Link hop: up the even IPUs, down the odd ones
// (0, 2, 4, ..., 5, 3, 1); with fewer than 3 replicas, 0, 1.
std::vector<std::uint32_t> ladderRing(std::uint32_t n);

// Throws std::invalid_argument when data and received differ in size or
// dtype, the size is not a multiple of the replicas, or the ring is not a
// permutation of the replicas.
std::vector<CollectiveStep> ringAllReduce(const ir::Tensor& data, const ir::Tensor& received,
                                          const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts);
std::vector<CollectiveStep> broadcast(const ir::Tensor& data, std::uint32_t replicas, std::uint32_t root);

}  // namespace ipusim::scheduler
