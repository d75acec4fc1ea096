#pragma once
// Replication, as Poplar's replicated graphs and TF's CrossReplicaOptimizer:
// the one-replica executable, compiled and memory-planned for the first
// `tilesPerReplica` tiles, is laid out `replicas` times. Every tensor becomes
// R copies of itself (shape [R, ...]; replica r's copy is elements
// [r n, (r + 1) n), mapped as the original on tiles + r x tilesPerReplica, at
// the same addresses); every compute set and Copy does its work for every
// replica at once; a stream copy moves every replica's slice (the infeed
// hands replica r the r-th batch of the global batch, the outfeed returns
// each replica's values). Before the updates, one ring all-reduce
// (collectives.hpp) sums every weight gradient over the replicas (all
// gradients in the same steps, as GCL fuses them), and the updates use the
// replicas' mean gradient: plain SGD's ScaledAdd divides its scale by R; for
// a fused rule (Adam, ...) the all-reduce's chunks are per interval of the
// weight's mapping and each owner scales its summed chunk by 1 / R between
// the reduce-scatter and the all-gather.
//
// Replicated tensor sharding (training.replicated_optimizer_state_sharding,
// TF's replicated_optimizer_state_sharding): the reduce-scatter and the mean
// run before the updates ("reduce_scatter"); each replica updates only the
// chunk it owns, holding 1/R of the optimizer state (its slots planned at
// 1/R of each tile's bytes by the lowering); an all-gather of the updated
// weights follows ("all_gather"). The same sums, the same mean, the same
// per-element update: the weights are bit-identical to the unsharded run's;
// the links carry the weights instead of the gradients in the all-gather.
#include "model/ir/executable.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/graph/schedule.hpp"

#include <cstdint>
#include <map>
#include <vector>

namespace ipusim::scheduler {

// Puts every SGD update after every other op (stable otherwise): an update
// may only run once the all-reduce has every replica's gradient. Valid
// because nothing in a step reads an update's result (a validation pass,
// which does, stays after the updates).
void moveUpdatesLast(const OpGraph& graph, Schedule& schedule);

struct ReplicatedUpdates {
  ir::Id before = ir::kNoId;  // the all-reduce (sharded: reduce-scatter and mean), right before the first update
  ir::Id after = ir::kNoId;   // sharded: the all-gather of the weights, right after the last update
};

// Lays out `exe` for `replicas` replicas (see above). `updateSequences` are
// the programs of the weight update ops; a replica spans `ipusPerReplica`
// IPUs. `shardOfVertex` (LoweredStep's): the sharded updates' compute sets,
// each vertex's chunk; empty when not sharded. Nothing when replicas == 1.
// `mirror` (timing only): keep one replica's compute sets and Copies and flag
// them in exe.mirror (model/ir/replica_mirror.hpp) instead of laying them out
// R times; tensors, streams and the all-reduce are laid out in full. Ignored
// (full layout) when tilesPerReplica is odd: tile pairs would not line up.
// `pods` > 1 (IPU-PODs joined by GW-Links, model Target::numPods): the
// all-reduce is staged in the PODs and across them (hierarchical_all_reduce.hpp),
// a fused rule's chunks per interval cut in R / pods; R must be a multiple of
// `pods`, and sharding over several PODs is refused (std::invalid_argument).
ReplicatedUpdates replicate(ir::Executable& exe, std::uint32_t replicas, std::uint32_t ipusPerReplica,
                            std::uint32_t tilesPerReplica, const std::vector<ir::Id>& updateSequences,
                            std::uint32_t workerContexts, bool mirror = false,
                            const std::map<ir::Id, std::vector<std::uint32_t>>& shardOfVertex = {},
                            std::uint32_t pods = 1);

}  // namespace ipusim::scheduler
