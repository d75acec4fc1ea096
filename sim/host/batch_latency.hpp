#pragma once
// BatchLatencies: how long each batch took from the host's point of view,
// from when its data entered the infeed queue (without feeds: when it was
// prepared, before its Engine::run's dispatch) to when the host held its
// outfed results (the outfeed dequeued; without feeds, the run's outfeed
// copy). With feeds the time the batch waits in the prefetch buffer counts:
// the figure is a loaded system's, the infeed kept full.
// The percentiles are exact: the simulation is deterministic, so a run has
// few distinct latencies, counted per value (memory grows with the distinct
// values, not with the steps).
#include "model/ir/types.hpp"

#include <cstdint>
#include <map>

namespace ipusim::sim {

class BatchLatencies {
 public:
  void add(ir::Cycles cycles) { ++counts_[cycles], ++total_; }
  std::uint64_t count() const { return total_; }
  // The smallest latency at least `p` (in (0, 1]) of the batches took no
  // longer than (the nearest-rank percentile); 0 without batches.
  ir::Cycles percentile(double p) const;
  ir::Cycles max() const { return counts_.empty() ? 0 : counts_.rbegin()->first; }

 private:
  std::map<ir::Cycles, std::uint64_t> counts_;
  std::uint64_t total_ = 0;
};

}  // namespace ipusim::sim
