#include "model/hardware/ipu_link_topology.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>

namespace ipusim::model::hardware {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

IpuLinkTopology::IpuLinkTopology(const IpuLinkParams& params, const GwLinkParams& gw)
    : numIpus_(params.numIpus), params_(params), gw_(gw) {
  const std::uint32_t pods = numPodsOf(params, gw);
  const std::uint32_t gatewayCount = pods > 1 ? numIpus_ / gw.ipusPerGateway : 0;
  numNodes_ = numIpus_ + gatewayCount;
  links_.assign(std::size_t(numNodes_) * numNodes_, 0);
  const std::uint32_t perPod = numIpus_ / pods;
  for (std::uint32_t q = 0; q < pods; ++q) ladder(q * perPod, perPod);
  if (pods > 1) gateways(pods);

  // Breadth-first search from every node; neighbours in ascending index order,
  // so among shortest routes the first hop goes to the lowest node.
  const std::uint32_t n = numNodes_;
  parent_.assign(std::size_t(n) * n, kNone);
  for (std::uint32_t from = 0; from < n; ++from) {
    std::uint32_t* parent = &parent_[std::size_t(from) * n];
    parent[from] = from;
    std::deque<std::uint32_t> queue{from};
    while (!queue.empty()) {
      const std::uint32_t at = queue.front();
      queue.pop_front();
      for (std::uint32_t next = 0; next < n; ++next)
        if (links(at, next) && parent[next] == kNone) {
          parent[next] = at;
          queue.push_back(next);
        }
    }
  }
}

// One ladder of n IPUs from IPU `first`.
void IpuLinkTopology::ladder(std::uint32_t first, std::uint32_t n) {
  for (std::uint32_t i = 0; i + 1 < n; i += 2) join(first + i, first + i + 1, params_.linksPerRung);
  for (std::uint32_t i = 0; i + 2 < n; ++i) join(first + i, first + i + 2, params_.linksPerRail);
  // A torus closes the rails: the last rung to the first (needs two rungs at least).
  if (params_.railsWrap && n >= 4 && n % 2 == 0) {
    join(first + n - 2, first, params_.linksPerRail);
    join(first + n - 1, first + 1, params_.linksPerRail);
  }
}

void IpuLinkTopology::gateways(std::uint32_t pods) {
  const std::uint32_t perGateway = gw_.ipusPerGateway;
  for (std::uint32_t ipu = 0; ipu < numIpus_; ++ipu) join(ipu, numIpus_ + ipu / perGateway, 1);
  const std::uint32_t machinesPerPod = numIpus_ / pods / perGateway;
  auto gateway = [&](std::uint32_t pod, std::uint32_t machine) { return numIpus_ + pod * machinesPerPod + machine; };
  for (std::uint32_t k = 0; k < machinesPerPod; ++k) {
    if (pods == 2) {
      join(gateway(0, k), gateway(1, k), gw_.linksPerGateway);
      continue;
    }
    for (std::uint32_t q = 0; q < pods; ++q) join(gateway(q, k), gateway((q + 1) % pods, k), gw_.linksPerGateway / 2);
  }
}

void IpuLinkTopology::join(std::uint32_t a, std::uint32_t b, std::uint32_t count) {
  links_[std::size_t(a) * numNodes_ + b] += count;
  links_[std::size_t(b) * numNodes_ + a] += count;
}

std::vector<IpuLinkTopology::Hop> IpuLinkTopology::route(std::uint32_t from, std::uint32_t to) const {
  if (from >= numIpus_ || to >= numIpus_)
    throw std::invalid_argument("IPU-Link route from IPU " + std::to_string(from) + " to IPU " + std::to_string(to) +
                                ": the system has " + std::to_string(numIpus_) + " IPUs (ipuLink.numIpus)");
  const std::uint32_t* parent = &parent_[std::size_t(from) * numNodes_];
  if (parent[to] == kNone)
    throw std::invalid_argument("IPU " + std::to_string(from) + " and IPU " + std::to_string(to) +
                                " are not joined by any route of IPU-Links (ipuLink.linksPerRung = " +
                                std::to_string(params_.linksPerRung) + ", ipuLink.linksPerRail = " +
                                std::to_string(params_.linksPerRail) + "; expected links > 0)");
  std::vector<Hop> hops;
  for (std::uint32_t at = to; at != from; at = parent[at]) hops.push_back({parent[at], at});
  std::reverse(hops.begin(), hops.end());
  return hops;
}

}  // namespace ipusim::model::hardware
