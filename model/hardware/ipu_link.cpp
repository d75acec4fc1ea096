#include "model/hardware/ipu_link.hpp"

#include "model/target_limits.hpp"

#include <algorithm>
#include <cmath>
#include <vector>
#include <stdexcept>
#include <string>

namespace ipusim::model::hardware {

IpuLink::IpuLink(const Target& target)
    : linkBytesPerCycle_(target.ipuLink.linkBytesPerSecond / target.clockHz),
      gwLinkBytesPerCycle_(target.gwLink.linkBytesPerSecond / target.clockHz),
      gatewayBytesPerCycle_(target.gwLink.ipuBytesPerSecond / target.clockHz),
      latencyCycles_(target.ipuLink.latencyCycles),
      gwLatencyCycles_(target.gwLink.latencyCycles),
      topology_(target.ipuLink, target.gwLink) {}

double IpuLink::hopBytesPerCycle(const IpuLinkTopology::Hop& hop) const {
  const bool fromGateway = topology_.isGateway(hop.first), toGateway = topology_.isGateway(hop.second);
  if (fromGateway && toGateway) return gwLinkBytesPerCycle_ * topology_.links(hop.first, hop.second);
  if (fromGateway || toGateway) return gatewayBytesPerCycle_;
  return linkBytesPerCycle_ * topology_.links(hop.first, hop.second);
}

ir::Cycles IpuLink::hopLatency(const IpuLinkTopology::Hop& hop) const {
  const bool fromGateway = topology_.isGateway(hop.first), toGateway = topology_.isGateway(hop.second);
  if (fromGateway && toGateway) return gwLatencyCycles_;
  return fromGateway || toGateway ? 0 : latencyCycles_;
}

ir::Cycles IpuLink::phaseCycles(const Flows& flows) const {
  if (flows.empty()) return 0;
  if (!(linkBytesPerCycle_ > 0))
    throw std::invalid_argument(
        "ipuLink.linkBytesPerSecond is 0: a copy between IPUs needs a positive IPU-Link bandwidth");
  std::map<IpuLinkTopology::Hop, std::uint64_t> hopBytes;  // directed hop -> bytes of every flow using it
  std::map<IpuLinkTopology::Hop, std::vector<IpuLinkTopology::Hop>> routes;
  for (const auto& [pair, bytes] : flows) {
    const auto route = topology_.route(pair.first, pair.second);
    for (const auto& hop : route) hopBytes[hop] += bytes;
    routes[pair] = route;
  }
  ir::Cycles longest = 0;
  for (const auto& [pair, route] : routes) {
    ir::Cycles busiest = 0, latency = 0;
    for (const auto& hop : route) {
      busiest = std::max(busiest, ceilDivide(hopBytes[hop], hopBytesPerCycle(hop)));
      latency += hopLatency(hop);
    }
    longest = std::max(longest, latency + busiest);
  }
  return longest;
}

}  // namespace ipusim::model::hardware
