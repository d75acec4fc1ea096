#pragma once
// Scheduling algorithms: each turns the op graph into a valid topological
// order; they differ in how long values stay live (TF's IPU
// SchedulingAlgorithm: CHOOSE_BEST, CLUSTERING, POST_ORDER, LOOK_AHEAD,
// SHORTEST_PATH).
//   post_order    — depth-first post-order from the step's final ops
//   look_ahead    — greedy: among ready ops, the one that frees the most bytes
//                   (bytes of inputs it is the last reader of minus bytes it creates)
//   shortest_path — ready ops by their distance from the graph's sources (breadth first)
//   clustering    — follow producer-consumer chains: after an op, a ready
//                   consumer of its outputs comes next
//   choose_best   — the algorithm above with the lowest peak liveness
#include "scheduler/graph/op_graph.hpp"

#include <string>
#include <vector>

namespace ipusim::scheduler {

struct Schedule {
  std::string algorithm;           // the algorithm that produced `order`
  std::vector<std::size_t> order;  // op indices
  std::uint64_t peakLivenessBytes = 0;
};

const std::vector<std::string>& schedulingAlgorithms();  // the four concrete ones
// Throws std::invalid_argument naming an unknown algorithm and the valid ones.
Schedule scheduleOps(const OpGraph& g, const std::string& algorithm);
// Peak over the schedule of the bytes of not-always-live values that are live
// (from their producer to their last reader).
std::uint64_t peakLivenessBytes(const OpGraph& g, const std::vector<std::size_t>& order);

}  // namespace ipusim::scheduler
