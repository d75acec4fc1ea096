#pragma once
// IpuLinkTopology: which IPUs are joined by how many IPU-Links, and the route
// a transfer between two IPUs takes.
//
// The systems Graphcore built are ladders: IPUs 2k and 2k+1 form a rung (the
// two IPUs of a C2 card, a pair of an IPU-M2000) joined by ipuLink.linksPerRung
// links; IPU i and IPU i+2 are joined along a rail by ipuLink.linksPerRail
// links (card to card, IPU-M2000 to IPU-M2000); with ipuLink.railsWrap the
// last rung joins the first (the IPU-POD64's torus). A route is a shortest
// path (fewest hops); among equals, the one whose hops go to the lowest IPU
// index first, so routes are deterministic.
#include "model/target.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace ipusim::model::hardware {

class IpuLinkTopology {
 public:
  using Hop = std::pair<std::uint32_t, std::uint32_t>;  // from IPU, to IPU (directly linked)

  explicit IpuLinkTopology(const IpuLinkParams& params);
  std::uint32_t numIpus() const { return numIpus_; }
  // Links joining IPUs a and b directly (0 when they are not neighbours).
  std::uint32_t links(std::uint32_t a, std::uint32_t b) const { return links_[std::size_t(a) * numIpus_ + b]; }
  // The hops from `from` to `to` (empty when from == to). Throws
  // std::invalid_argument naming the link parameters when no route exists.
  std::vector<Hop> route(std::uint32_t from, std::uint32_t to) const;

 private:
  void join(std::uint32_t a, std::uint32_t b, std::uint32_t count);

  std::uint32_t numIpus_;
  std::vector<std::uint32_t> links_;           // numIpus x numIpus, symmetric
  // parent_[from * numIpus + to]: the IPU before `to` on the route from `from`
  // (kNone when `to` cannot be reached).
  std::vector<std::uint32_t> parent_;
  IpuLinkParams params_;
};

}  // namespace ipusim::model::hardware
