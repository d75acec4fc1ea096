#include "model/hardware/ipu_link_topology.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>

namespace ipusim::model::hardware {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

IpuLinkTopology::IpuLinkTopology(const IpuLinkParams& params)
    : numIpus_(params.numIpus), links_(std::size_t(params.numIpus) * params.numIpus, 0), params_(params) {
  const std::uint32_t n = numIpus_;
  for (std::uint32_t i = 0; i + 1 < n; i += 2) join(i, i + 1, params.linksPerRung);
  for (std::uint32_t i = 0; i + 2 < n; ++i) join(i, i + 2, params.linksPerRail);
  // A torus closes the rails: the last rung to the first (needs two rungs at least).
  if (params.railsWrap && n >= 4 && n % 2 == 0) {
    join(n - 2, 0, params.linksPerRail);
    join(n - 1, 1, params.linksPerRail);
  }

  // Breadth-first search from every IPU; neighbours in ascending index order,
  // so among shortest routes the first hop goes to the lowest IPU.
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

void IpuLinkTopology::join(std::uint32_t a, std::uint32_t b, std::uint32_t count) {
  links_[std::size_t(a) * numIpus_ + b] += count;
  links_[std::size_t(b) * numIpus_ + a] += count;
}

std::vector<IpuLinkTopology::Hop> IpuLinkTopology::route(std::uint32_t from, std::uint32_t to) const {
  if (from >= numIpus_ || to >= numIpus_)
    throw std::invalid_argument("IPU-Link route from IPU " + std::to_string(from) + " to IPU " + std::to_string(to) +
                                ": the system has " + std::to_string(numIpus_) + " IPUs (ipuLink.numIpus)");
  const std::uint32_t* parent = &parent_[std::size_t(from) * numIpus_];
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
