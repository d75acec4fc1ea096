#include "sim/cli/instance_peers.hpp"

#include "model/stop_request.hpp"

namespace ipusim::sim {

std::string InstancePeers::allGather(Channel channel, const std::string& own) {
  std::optional<std::string> all = cluster_.allGather(int(channel), own, [] { return model::stopRequested(); });
  if (!all) throw model::StopRequested();
  return std::move(*all);
}

}  // namespace ipusim::sim
