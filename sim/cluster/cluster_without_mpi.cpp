// The Cluster of a build without MPI (CMake found none): a cluster of one,
// and a clear refusal when a launcher started this process as a rank.
#include "sim/cluster/cluster.hpp"

#include <cstdlib>
#include <stdexcept>

namespace ipusim::sim::cluster {

bool builtWithMpi() { return false; }

Cluster::Cluster() : info_(launchInfo()) {
  if (info_.launched)
    throw std::runtime_error("started by an MPI launcher as rank " + std::to_string(info_.rank) +
                             (info_.size ? " of " + std::to_string(info_.size) : std::string()) +
                             ", but this ipusim was built without MPI (install libopenmpi-dev, as .ci/setup does, "
                             "and configure again)");
}

struct Cluster::Channels {};

Cluster::~Cluster() = default;

bool Cluster::allGather(int, const std::string& own, std::string& all, const std::function<bool()>&) {
  all = own;
  return true;
}

void Cluster::send(int to, int, const std::string&) {
  throw std::logic_error("Cluster::send: a cluster of one has no rank " + std::to_string(to));
}

std::optional<Message> Cluster::poll() { return std::nullopt; }

Message Cluster::receive(int from, int) {
  throw std::logic_error("Cluster::receive: a cluster of one has no rank " + std::to_string(from));
}

void Cluster::waitForAll() {}

void Cluster::abort(int exitCode) { std::_Exit(exitCode); }

}  // namespace ipusim::sim::cluster
