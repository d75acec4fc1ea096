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
// The chunks are contiguous by default (chunk c: elements [c n / R,
// (c + 1) n / R) of a copy). Per-interval chunks (perIntervalChunks) cut
// every interval of the tensor's mapping into R pieces instead, chunk c the
// c-th piece of each: every tile then holds 1/R of every chunk, so a
// replica's share of a sharded optimizer state is 1/R of each tile's bytes
// (the replicated tensor sharding's layout, replication.hpp).
//
// Mean: after the reduce-scatter, each replica scales the chunk it owns by
// 1 / R (a Scale vertex per piece and worker), as GCL's MEAN operator.
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

struct ElementRange {
  std::uint64_t begin, end;
};
// R chunks of one replica's copy (element offsets within it), each a list of ranges.
using Chunks = std::vector<std::vector<ElementRange>>;
Chunks contiguousChunks(std::uint64_t elements, std::uint32_t parts);
// `mapping`: one replica's (offsets within its copy).
Chunks perIntervalChunks(const std::vector<ir::TileInterval>& mapping, std::uint32_t parts);
// The chunk a replica holds summed after the reduce-scatter: ring position p owns chunk (p + 1) mod R.
std::uint32_t ownedChunk(const std::vector<std::uint32_t>& ring, std::uint32_t replica);

// A ring of `n` replicas (replica r on IPU r of the ladder) whose every step
// is one IPU-Link hop: up the even IPUs, down the odd ones
// (0, 2, 4, ..., 5, 3, 1); with fewer than 3 replicas, 0, 1.
std::vector<std::uint32_t> ladderRing(std::uint32_t n);

// Throws std::invalid_argument when data and received differ in size or
// dtype, the size is not a multiple of the replicas, or the ring is not a
// permutation of the replicas.
std::vector<CollectiveStep> ringAllReduce(const ir::Tensor& data, const ir::Tensor& received,
                                          const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts);
// The all-reduce's halves, over `chunks` (R of them): reduce-scatter (sums
// into `data`, through `received`), all-gather (in place).
std::vector<CollectiveStep> ringReduceScatter(const ir::Tensor& data, const ir::Tensor& received,
                                              const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts,
                                              const Chunks& chunks);
std::vector<CollectiveStep> ringAllGather(const ir::Tensor& data, const std::vector<std::uint32_t>& ring, const Chunks& chunks);
// Each replica's owned chunk of `data` times `scale` (one step, no exchange).
CollectiveStep scaleOwnedChunks(const ir::Tensor& data, const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts,
                                const Chunks& chunks, double scale);
// The same over a ring of some of the tensor's `replicas` (a POD's replicas,
// or one replica of each POD: hierarchical_all_reduce.hpp): `chunks` has one
// chunk per replica of the ring. Throws std::invalid_argument when the ring
// names a replica twice or one of no copy.
std::vector<CollectiveStep> ringReduceScatterOver(const ir::Tensor& data, const ir::Tensor& received,
                                                  std::uint32_t replicas, const std::vector<std::uint32_t>& ring,
                                                  std::uint32_t workerContexts, const Chunks& chunks);
std::vector<CollectiveStep> ringAllGatherOver(const ir::Tensor& data, std::uint32_t replicas,
                                              const std::vector<std::uint32_t>& ring, const Chunks& chunks);
CollectiveStep scaleOwnedChunksOver(const ir::Tensor& data, std::uint32_t replicas,
                                    const std::vector<std::uint32_t>& ring, std::uint32_t workerContexts,
                                    const Chunks& chunks, double scale);
std::vector<CollectiveStep> broadcast(const ir::Tensor& data, std::uint32_t replicas, std::uint32_t root);

// Appends `steps` into `merged` step by step: step s's exchange and compute
// set join merged[s]'s, which takes its name (collectives that move at once,
// every tensor's or every POD's, each one exchange and one compute set a
// step). `merged` grows to the longer of the two.
void mergeSteps(std::vector<CollectiveStep>& merged, std::vector<CollectiveStep> steps);

}  // namespace ipusim::scheduler
