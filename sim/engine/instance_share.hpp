#pragma once
// InstanceShare: one instance's share of a replicated run spread over
// several processes (ReplicaPeers), as PopDist divides replicas: instance k
// of n holds replicas [k R / n, (k + 1) R / n) and computes only their
// vertices and products (model::LoadOptions::functionalTiles). Every
// instance times every replica, so each one's simulated clock is the one
// process's, cycle for cycle.
//
// At a collective (the gradients' all-reduce; a sharded optimizer's
// reduce-scatter and all-gather), every instance contributes its replicas'
// copies of the tensors the collective reads (the sources of its Copies)
// and takes the others'; then every instance runs the whole collective as
// one process does: the same additions, in the simulated ring's order, over
// the same bytes, so every replica's result is the one process's bit for
// bit. An outfeed copy (each replica's values in turn) is completed the same
// way before the host reads it. Each gather carries the instance's
// simulated cycle: the clocks are joined there, and an instance whose clock
// differs is an error (it would mean the instances ran different programs).
#include "model/host_stream.hpp"
#include "model/ipu_system.hpp"
#include "sim/engine/replica_peers.hpp"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ipusim::sim {

// The instances disagree (agree(), agreeOnWeights()): every instance
// compares every instance's part with instance 0's, so every one throws it
// alike, with one message; instance 0 alone need say it (run_on_ranks.hpp).
struct InstancesDisagree : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class InstanceShare {
 public:
  // Throws std::invalid_argument when the executable's replicas do not
  // divide over the instances.
  InstanceShare(ReplicaPeers& peers, const ir::Executable& exe, const model::Target& target);

  std::uint32_t replicas() const { return replicas_; }
  std::uint32_t instances() const { return peers_.instances(); }
  std::uint32_t firstReplica() const { return first_; }
  std::uint32_t replicaCount() const { return count_; }
  model::TileRange tiles() const { return tiles_; }

  // Before the run: every instance must run the same run (`description`:
  // what the host will do, with the executable's size). Throws naming the
  // instance whose run differs (a rank given other flags would otherwise
  // wait at a collective the others never reach). Throws InstancesDisagree.
  void agree(const std::string& description, const ir::Executable& exe);
  // After a run that computes the numbers: every instance must hold the
  // same weights (`digest`: its replicas' weights digest). agree() compares
  // the run's shape only: ranks given another learning rate, seed or dataset
  // ran to the end with weights of their own, and rank 0 printed its loss as
  // the job's. Throws InstancesDisagree naming the ranks whose digest
  // differs from rank 0's. Called before the profile is committed: a run
  // whose ranks disagree leaves none that reads as complete.
  void agreeOnWeights(const std::string& digest);
  // LoadOptions::beforeCollective: the collective `program`'s tensors gathered.
  void beforeCollective(model::IpuSystem& system, ir::Id program);
  // An outfeed copy's bytes (R equal parts, a replica's each) with the other
  // instances' replicas' parts filled in. Empty bytes (synthetic data) stay empty.
  void completeOutfeed(model::Bytes& bytes);

  struct Traffic {
    std::uint64_t gathers = 0, bytesSent = 0, bytesReceived = 0;
    double seconds = 0;  // wall time in ReplicaPeers::allGather
  };
  const Traffic& traffic() const { return traffic_; }

 private:
  // The gather with the clocks joined: sent_ (a cycle header, then this
  // instance's bytes) from every instance into all_. Returns the bytes each
  // instance's part holds after its header (instance i's at partAt(i)).
  std::uint64_t gather(ReplicaPeers::Channel channel, const std::string& what);
  std::size_t partAt(std::uint32_t instance) const { return instance * sent_.size() + sizeof(std::uint64_t); }
  const std::vector<ir::Id>& tensorsOf(const ir::Executable& exe, ir::Id program);

  ReplicaPeers& peers_;
  std::uint32_t replicas_ = 1, first_ = 0, count_ = 1;
  model::TileRange tiles_;
  std::map<ir::Id, std::vector<ir::Id>> tensors_;  // per collective: the tensors its Copies read
  Traffic traffic_;
  std::string sent_, all_;  // the gathers' buffers, reused
};

}  // namespace ipusim::sim
