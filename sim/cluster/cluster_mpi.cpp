// The Cluster on MPI (built where CMake finds MPI: sim/cluster/CMakeLists.txt).
#include "sim/cluster/cluster.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <thread>

namespace ipusim::sim::cluster {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(1);
constexpr auto kGatherFirstPause = std::chrono::microseconds(10);
constexpr auto kGatherLongestPause = std::chrono::microseconds(250);

void check(int code, const char* call, int rank) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + " on rank " + std::to_string(rank) + ": " + std::string(text, length));
}

// The asynchronous signals ipusim handles (sim/host/interrupt.hpp) and
// SIGCHLD, blocked while MPI_Init starts its threads, which inherit the
// mask: a signal then always reaches the thread that runs the command, and
// never finds a child started but not yet recorded as ours.
class AsyncSignalsBlocked {
 public:
  AsyncSignalsBlocked() {
    sigset_t blocked;
    sigemptyset(&blocked);
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&blocked, signal);
    pthread_sigmask(SIG_BLOCK, &blocked, &previous_);
  }
  ~AsyncSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  AsyncSignalsBlocked(const AsyncSignalsBlocked&) = delete;
  AsyncSignalsBlocked& operator=(const AsyncSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace

bool builtWithMpi() { return true; }

struct Cluster::Channels {
  MPI_Comm comms[Cluster::kChannels];
};

Cluster::Cluster() : info_(launchInfo()) {
  if (!info_.launched) return;
  // Open MPI's shared-memory transport copies a large message straight from
  // the sender's memory (CMA: process_vm_readv), which a container without
  // CAP_SYS_PTRACE refuses, failing the send. ipusim's messages are a few
  // kilobytes (a sweep's) to a few megabytes (a run's gathers): copied
  // through the shared buffer instead, unless the user says otherwise.
  ::setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", /*overwrite=*/0);
  // A run's gathers (megabytes a step) on a host whose cores are shared:
  // ranks that yield while they wait, and shared-memory fragments of 256 KB
  // instead of 32 KB (fewer round trips, each of which waits for the other
  // rank to be scheduled). Measured, 300 steps of 4 replicas on 2 ranks of
  // this loaded 2-core machine: 8.6 s in MPI a rank without them, 1.4-1.9 s
  // with both (sim/cluster/README.md).
  ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
  ::setenv("OMPI_MCA_btl_vader_max_send_size", "262144", /*overwrite=*/0);
  {
    const AsyncSignalsBlocked blocked;
    if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS)
      throw std::runtime_error("MPI_Init failed on rank " + std::to_string(info_.rank));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank", info_.rank);
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size", info_.rank);
  if (info_.size == 0) info_.size = size;  // (PMIx names the rank, not the size)
  if (rank != info_.rank || size != info_.size)
    throw std::runtime_error("MPI says rank " + std::to_string(rank) + " of " + std::to_string(size) +
                             ", the launcher's environment rank " + std::to_string(info_.rank) + " of " +
                             std::to_string(info_.size) + ": started by another MPI's launcher?");
}

Cluster::~Cluster() {
  // An exception leaving: the caller ends the job (abort()); a finalize
  // would wait for ranks that wait for this one.
  if (!info_.launched || finalized_ || std::uncaught_exceptions() > 0) return;
  finalized_ = true;
  if (channels_)
    for (MPI_Comm& comm : channels_->comms) MPI_Comm_free(&comm);
  MPI_Finalize();
}

bool Cluster::allGather(int channel, const std::string& own, std::string& all,
                        const std::function<bool()>& stopped) {
  if (!info_.launched) {
    all = own;
    return true;
  }
  if (channel < 0 || channel >= kChannels)
    throw std::logic_error("Cluster::allGather: channel " + std::to_string(channel) + ", expected 0 to " +
                           std::to_string(kChannels - 1));
  if (own.size() > std::size_t(INT_MAX) / std::size_t(info_.size))
    throw std::runtime_error("MPI_Allgather on rank " + std::to_string(info_.rank) + ": " +
                             std::to_string(own.size()) + " bytes from each of " + std::to_string(info_.size) +
                             " ranks, over MPI's count of INT_MAX");
  if (!channels_) {
    // Every rank makes the channels at its first gather, whichever channel
    // that is: the duplications happen in the same order everywhere.
    channels_ = std::make_unique<Channels>();
    for (MPI_Comm& comm : channels_->comms) {
      check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup", info_.rank);
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    }
  }
  all.resize(own.size() * std::size_t(info_.size));
  // Two steps: every rank arrives (a barrier polled with sleeps, so that a
  // rank waiting for a slower one leaves it the core), then the bytes move
  // in one blocking MPI_Allgather, all ranks present. (A nonblocking gather
  // polled with sleeps moved a large buffer a fragment per poll: 600 gathers
  // of 1.6 MB took 4 s on 2 ranks.)
  MPI_Comm comm = channels_->comms[channel];
  MPI_Request arrived;
  check(MPI_Ibarrier(comm, &arrived), "MPI_Ibarrier", info_.rank);
  auto pause = kGatherFirstPause;
  for (int done = 0;;) {
    check(MPI_Test(&arrived, &done, MPI_STATUS_IGNORE), "MPI_Test", info_.rank);
    if (done) break;
    if (stopped && stopped()) return false;
    // Sleeps from 10 us, doubling to 250 us: ranks in step meet within the
    // first few polls, and a waiting rank costs the others little.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, kGatherLongestPause);
  }
  check(MPI_Allgather(own.data(), int(own.size()), MPI_CHAR, all.data(), int(own.size()), MPI_CHAR, comm),
        "MPI_Allgather", info_.rank);
  return true;
}

void Cluster::send(int to, int tag, const std::string& bytes) {
  if (!info_.launched) throw std::logic_error("Cluster::send: a cluster of one has no rank " + std::to_string(to));
  if (bytes.size() > INT_MAX)
    throw std::runtime_error("MPI_Send on rank " + std::to_string(info_.rank) + ": a message of " +
                             std::to_string(bytes.size()) + " bytes, over MPI's count of INT_MAX");
  check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD), "MPI_Send",
        info_.rank);
}

std::optional<Message> Cluster::poll() {
  if (!info_.launched) return std::nullopt;
  int arrived = 0;
  MPI_Status status;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status), "MPI_Iprobe", info_.rank);
  if (!arrived) return std::nullopt;
  int count = 0;
  check(MPI_Get_count(&status, MPI_CHAR, &count), "MPI_Get_count", info_.rank);
  Message message{status.MPI_SOURCE, status.MPI_TAG, std::string(static_cast<std::size_t>(count), '\0')};
  check(MPI_Recv(message.bytes.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE),
        "MPI_Recv", info_.rank);
  return message;
}

Message Cluster::receive(int from, int tag) {
  if (!info_.launched) throw std::logic_error("Cluster::receive: a cluster of one has no rank " + std::to_string(from));
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    check(MPI_Iprobe(from, tag, MPI_COMM_WORLD, &arrived, &status), "MPI_Iprobe", info_.rank);
    if (arrived) {
      int count = 0;
      check(MPI_Get_count(&status, MPI_CHAR, &count), "MPI_Get_count", info_.rank);
      Message message{from, tag, std::string(static_cast<std::size_t>(count), '\0')};
      check(MPI_Recv(message.bytes.data(), count, MPI_CHAR, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv",
            info_.rank);
      return message;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void Cluster::waitForAll() {
  if (!info_.launched) return;
  MPI_Request request;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier", info_.rank);
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test", info_.rank);
    if (done) return;
    std::this_thread::sleep_for(kPollInterval);
  }
}

void Cluster::abort(int exitCode) {
  if (info_.launched) MPI_Abort(MPI_COMM_WORLD, exitCode);
  std::_Exit(exitCode);
}

}  // namespace ipusim::sim::cluster
