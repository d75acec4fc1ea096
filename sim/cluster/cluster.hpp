#pragma once
// The ranks of an MPI job, as one process sees them: the one place that
// calls MPI (nothing else includes mpi.h). A process started by a launcher
// (launch.hpp) joins the job: MPI_Init when the Cluster is made,
// MPI_Finalize when it ends normally. A process started without a launcher
// is a cluster of one, rank 0 of 1, and makes no MPI call at all: Open MPI's
// singleton MPI_Init costs 0.8-1.0 s on this machine (it starts a daemon),
// and a command that runs alone needs none of it (sim/cluster/README.md).
//
// Waiting never spins: the ranks share cores with the simulations they
// start, so receive() and waitForAll() poll and sleep a millisecond between
// polls (a blocking MPI call in Open MPI busy-polls a core).
//
// Errors: a failed MPI call throws std::runtime_error naming the call, the
// rank and MPI's error text. A process launched as a rank whose ipusim was
// built without MPI cannot join: the constructor throws, saying so.
#include "sim/cluster/launch.hpp"
#include "sim/cluster/message.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ipusim::sim::cluster {

// Whether this build has MPI (found by CMake: libopenmpi-dev).
bool builtWithMpi();

class Cluster {
 public:
  Cluster();   // joins the launcher's job, or is a cluster of one
  ~Cluster();  // MPI_Finalize, unless an exception is leaving (abort() ends the job then)
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  int rank() const { return info_.rank; }
  int size() const { return info_.size; }
  int localSize() const { return info_.localSize; }  // ranks on this host
  bool joined() const { return info_.launched; }

  // Sends `bytes` to rank `to` with `tag` (0 to 32767); returns when the
  // bytes may be reused (a small message at once; a large one when the
  // receiver has taken it).
  void send(int to, int tag, const std::string& bytes);
  // A message that has arrived, from any rank with any tag, or nothing; never waits.
  std::optional<Message> poll();
  // Waits for a message from `from` with `tag`.
  Message receive(int from, int tag);
  // Waits until every rank has called it.
  void waitForAll();
  // Every rank's `own` bytes into `all` (resized), concatenated in rank
  // order: every rank calls it, in the same order on a channel, with the
  // same number of bytes. Channels (0 to kChannels - 1) are separate
  // communicators, so that the gathers of one channel never meet another's.
  // The ranks first meet at a barrier polled with sleeps of 10 to 250 us (a
  // gather a simulated step is on the run's critical path), then the bytes
  // move in one MPI_Allgather. Returns false when `stopped` says so while it
  // waits to meet (the process was interrupted: the barrier is left behind,
  // and the job must end without finalize: leave()).
  static constexpr int kChannels = 2;
  bool allGather(int channel, const std::string& own, std::string& all, const std::function<bool()>& stopped);
  // The job is ending without this rank's MPI_Finalize (an interrupted run,
  // a gather left behind): the destructor will not wait for the others.
  void leave() { finalized_ = true; }
  // Ends the whole job (every rank) with `exitCode`; the launcher says which rank called it.
  [[noreturn]] void abort(int exitCode);

 private:
  LaunchInfo info_;
  bool finalized_ = false;
  struct Channels;  // the channels' communicators, made at the first gather
  std::unique_ptr<Channels> channels_;
};

}  // namespace ipusim::sim::cluster
