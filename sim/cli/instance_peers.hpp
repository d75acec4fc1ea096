#pragma once
// InstancePeers: the ranks of an MPI job (cluster::Cluster) as the Engine's
// ReplicaPeers: rank k is instance k. A gather left by an interrupt (the
// launcher's SIGTERM when another rank died) throws model::StopRequested, as
// any interrupted simulation step does.
#include "sim/cluster/cluster.hpp"
#include "sim/engine/replica_peers.hpp"

namespace ipusim::sim {

class InstancePeers : public ReplicaPeers {
 public:
  explicit InstancePeers(cluster::Cluster& cluster) : cluster_(cluster) {}
  std::uint32_t instance() const override { return std::uint32_t(cluster_.rank()); }
  std::uint32_t instances() const override { return std::uint32_t(cluster_.size()); }
  void allGather(Channel channel, const std::string& own, std::string& all) override;

 private:
  cluster::Cluster& cluster_;
};

}  // namespace ipusim::sim
