#pragma once
// IpuLink: the time of one exchange phase's traffic between IPUs over the
// IPU-Link fabric (IpuLinkTopology).
//
// Each flow (bytes from one IPU to another) follows its route. A hop carries,
// in each direction: between two IPUs, links x ipuLink.linkBytesPerSecond
// (latency ipuLink.latencyCycles); between an IPU and its IPU-Gateway,
// gwLink.ipuBytesPerSecond (no latency of its own); between two gateways,
// links x gwLink.linkBytesPerSecond (latency gwLink.latencyCycles). Flows
// whose routes share a hop in the same direction share its bandwidth.
// Transfers are cut through (a hop forwards bytes as they arrive), so a flow
// lasts
//   the sum of its hops' latencies + ceil(bytes on its busiest hop / that hop's bytes per cycle)
// and the phase's link part is the longest flow. An IPU's outgoing traffic is
// therefore bounded by the links it has, and a multi-hop route pays each hop.
#include "model/hardware/transfer_cycles.hpp"
#include "model/hardware/ipu_link_topology.hpp"
#include "model/ir/types.hpp"
#include "model/target.hpp"

#include <cstdint>
#include <map>
#include <utility>

namespace ipusim::model::hardware {

class IpuLink {
 public:
  using Flows = std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t>;  // (from, to) -> bytes

  explicit IpuLink(const Target& target);
  // Cycles of the link part of a phase moving `flows`. Throws
  // std::invalid_argument naming the link parameters when a flow has no route.
  ir::Cycles phaseCycles(const Flows& flows) const;
  const IpuLinkTopology& topology() const { return topology_; }

 private:
  // A hop's bytes per cycle, each direction, and its latency.
  double hopBytesPerCycle(const IpuLinkTopology::Hop& hop) const;
  ir::Cycles hopLatency(const IpuLinkTopology::Hop& hop) const;

  double linkBytesPerCycle_, gwLinkBytesPerCycle_, gatewayBytesPerCycle_;
  ir::Cycles latencyCycles_, gwLatencyCycles_;
  IpuLinkTopology topology_;
};

}  // namespace ipusim::model::hardware
