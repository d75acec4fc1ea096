#pragma once
// IpuLinkTopology: which IPUs are joined by how many IPU-Links, which
// IPU-Gateways by how many GW-Links, and the route a transfer between two
// IPUs takes.
//
// The systems Graphcore built are ladders: IPUs 2k and 2k+1 form a rung (the
// two IPUs of a C2 card, a pair of an IPU-M2000) joined by ipuLink.linksPerRung
// links; IPU i and IPU i+2 are joined along a rail by ipuLink.linksPerRail
// links (card to card, IPU-M2000 to IPU-M2000); with ipuLink.railsWrap the
// last rung joins the first (the IPU-POD64's torus).
//
// With gwLink.ipusPerPod < numIpus the system is PODs of that many IPUs, each
// its own ladder (IPU i of POD q is IPU q x ipusPerPod + i), joined by
// GW-Links: every gwLink.ipusPerGateway consecutive IPUs (an IPU-Machine)
// reach their IPU-Gateway (a node of the graph numbered numIpus + machine),
// and machine k's gateway of POD q is joined to machine k's gateway of POD
// q + 1 (mod the PODs) by half its gwLink.linksPerGateway links (east and
// west: the loop of directly connected racks); with two PODs all its links go
// to the other. A route is a shortest path (fewest hops over IPUs and
// gateways); among equals, the one whose hops go to the lowest node index
// first, so routes are deterministic.
#include "model/target.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace ipusim::model::hardware {

class IpuLinkTopology {
 public:
  using Hop = std::pair<std::uint32_t, std::uint32_t>;  // from node, to node (directly linked)

  explicit IpuLinkTopology(const IpuLinkParams& params, const GwLinkParams& gw = GwLinkParams{});
  std::uint32_t numIpus() const { return numIpus_; }
  // IPUs, then the gateways (none with one POD).
  std::uint32_t numNodes() const { return numNodes_; }
  bool isGateway(std::uint32_t node) const { return node >= numIpus_; }
  // Links joining nodes a and b directly (0 when they are not neighbours): IPU-Links between two IPUs,
  // GW-Links between two gateways, 1 between an IPU and its gateway.
  std::uint32_t links(std::uint32_t a, std::uint32_t b) const { return links_[std::size_t(a) * numNodes_ + b]; }
  // The hops from IPU `from` to IPU `to` (empty when from == to). Throws
  // std::invalid_argument naming the link parameters when no route exists.
  std::vector<Hop> route(std::uint32_t from, std::uint32_t to) const;

 private:
  void join(std::uint32_t a, std::uint32_t b, std::uint32_t count);
  void ladder(std::uint32_t first, std::uint32_t n);
  void gateways(std::uint32_t pods);

  std::uint32_t numIpus_, numNodes_;
  std::vector<std::uint32_t> links_;           // numNodes x numNodes, symmetric
  // parent_[from * numNodes + to]: the node before `to` on the route from
  // `from` (kNone when `to` cannot be reached).
  std::vector<std::uint32_t> parent_;
  IpuLinkParams params_;
  GwLinkParams gw_;
};

}  // namespace ipusim::model::hardware
