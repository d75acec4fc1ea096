#include "sim/cli/instance_peers.hpp"

#include "model/stop_request.hpp"

namespace ipusim::sim {

void InstancePeers::allGather(Channel channel, const std::string& own, std::string& all) {
  if (!cluster_.allGather(int(channel), own, all, [] { return model::stopRequested(); })) throw model::StopRequested();
}

}  // namespace ipusim::sim
