#pragma once
// Replication, as Poplar's replicated graphs and TF's CrossReplicaOptimizer:
// the one-replica executable, compiled and memory-planned for the first
// `tilesPerReplica` tiles, is laid out `replicas` times. Every tensor becomes
// R copies of itself (shape [R, ...]; replica r's copy is elements
// [r n, (r + 1) n), mapped as the original on tiles + r x tilesPerReplica, at
// the same addresses); every compute set and Copy does its work for every
// replica at once; a stream copy moves every replica's slice (the infeed
// hands replica r the r-th batch of the global batch, the outfeed returns
// each replica's values). Before the SGD updates, one ring all-reduce
// (collectives.hpp) sums every weight gradient over the replicas (all
// gradients in the same steps, as GCL fuses them), and the updates' scale is
// divided by R: the update uses the replicas' mean gradient.
#include "model/ir/executable.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/graph/schedule.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::scheduler {

// Puts every SGD update after every other op (stable otherwise): an update
// may only run once the all-reduce has every replica's gradient. Valid
// because nothing in a step reads an update's result (a validation pass,
// which does, stays after the updates).
void moveUpdatesLast(const OpGraph& graph, Schedule& schedule);

// Lays out `exe` for `replicas` replicas (see above). `updateSequences` are
// the programs of the SGD update ops; a replica spans `ipusPerReplica` IPUs. Returns the all-reduce's Sequence (to
// run right before the first update), or ir::kNoId when replicas == 1.
// `mirror` (timing only): keep one replica's compute sets and Copies and flag
// them in exe.mirror (model/ir/replica_mirror.hpp) instead of laying them out
// R times; tensors, streams and the all-reduce are laid out in full. Ignored
// (full layout) when tilesPerReplica is odd: tile pairs would not line up.
ir::Id replicate(ir::Executable& exe, std::uint32_t replicas, std::uint32_t ipusPerReplica, std::uint32_t tilesPerReplica,
                 const std::vector<ir::Id>& updateSequences, std::uint32_t workerContexts, bool mirror = false);

}  // namespace ipusim::scheduler
