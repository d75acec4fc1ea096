#pragma once
// ReplicaPeers: the other processes ("instances", as PopDist calls them) of
// a replicated run shared over several processes, as the Engine sees them.
// Instance k of n computes replicas [k R / n, (k + 1) R / n) of the R
// replicas (instance_share.hpp); what it needs of the others' replicas it
// gathers through this interface. Implemented on MPI by
// sim/cli/instance_peers.hpp (on sim/cluster/'s Cluster); nothing below sim/ knows of it.
#include <cstdint>
#include <string>

namespace ipusim::sim {

class ReplicaPeers {
 public:
  // Gathers are independent per channel: a collective's buffers and the
  // outfeed's copies may be gathered from different simulation threads.
  enum class Channel { Collective = 0, Outfeed = 1 };

  virtual ~ReplicaPeers() = default;
  virtual std::uint32_t instance() const = 0;   // this process's index, 0 .. instances() - 1
  virtual std::uint32_t instances() const = 0;
  // Every instance's `own` bytes into `all`, concatenated in instance order
  // (`all` is the caller's, reused: a gather a step allocates nothing).
  // Every instance calls it on `channel` at the same point of the run with
  // the same number of bytes. Throws std::runtime_error on a failure, and
  // model::StopRequested when the process is interrupted while it waits.
  virtual void allGather(Channel channel, const std::string& own, std::string& all) = 0;
};

}  // namespace ipusim::sim
