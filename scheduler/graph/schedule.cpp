#include "scheduler/graph/schedule.hpp"

#include <boost/graph/depth_first_search.hpp>

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

using Priority = std::function<long long(std::size_t op, std::size_t previous)>;

// Kahn's algorithm choosing, among ready ops, the one with the highest
// priority (ties: lowest index). Always yields a topological order.
std::vector<std::size_t> listSchedule(const OpGraph& g, const std::function<long long(std::size_t, std::size_t, const std::vector<int>&)>& priority) {
  const std::size_t n = g.ops.size();
  std::vector<int> waiting(n, 0);
  for (std::size_t v = 0; v < n; ++v) waiting[v] = int(boost::in_degree(v, g.graph));
  std::vector<std::size_t> ready, order;
  for (std::size_t v = 0; v < n; ++v)
    if (!waiting[v]) ready.push_back(v);
  std::size_t previous = std::numeric_limits<std::size_t>::max();
  while (!ready.empty()) {
    auto best = ready.begin();
    long long bestScore = std::numeric_limits<long long>::min();
    for (auto it = ready.begin(); it != ready.end(); ++it) {
      const long long s = priority(*it, previous, waiting);
      if (s > bestScore || (s == bestScore && *it < *best)) best = it, bestScore = s;
    }
    const std::size_t op = *best;
    ready.erase(best);
    order.push_back(op);
    previous = op;
    for (auto [e, end] = boost::out_edges(op, g.graph); e != end; ++e) {
      const std::size_t t = boost::target(*e, g.graph);
      if (--waiting[t] == 0) ready.push_back(t);
    }
  }
  return order;
}

// Per value, the ops reading it.
std::vector<std::vector<std::size_t>> readers(const OpGraph& g) {
  std::vector<std::vector<std::size_t>> r(g.values.size());
  for (std::size_t op = 0; op < g.ops.size(); ++op)
    for (std::size_t in : g.ops[op].inputs) r[in].push_back(op);
  return r;
}

std::vector<std::size_t> postOrder(const OpGraph& g) {
  // DFS over reversed edges from each sink: an op is emitted after all its inputs.
  std::vector<char> state(g.ops.size(), 0);
  std::vector<std::size_t> order;
  std::function<void(std::size_t)> visit = [&](std::size_t v) {
    if (state[v]) return;
    state[v] = 1;
    for (auto [e, end] = boost::in_edges(v, g.graph); e != end; ++e) visit(boost::source(*e, g.graph));
    order.push_back(v);
  };
  for (std::size_t v = 0; v < g.ops.size(); ++v)
    if (boost::out_degree(v, g.graph) == 0) visit(v);
  return order;
}

std::vector<std::size_t> lookAhead(const OpGraph& g) {
  const auto r = readers(g);
  std::vector<std::size_t> readsLeft(g.values.size());
  for (std::size_t v = 0; v < g.values.size(); ++v) readsLeft[v] = r[v].size();
  std::vector<std::size_t> order;
  auto score = [&](std::size_t op, std::size_t, const std::vector<int>&) {
    long long freed = 0;
    for (std::size_t in : g.ops[op].inputs)
      if (!g.values[in].alwaysLive() && readsLeft[in] == 1) freed += (long long)g.values[in].numBytes();
    for (std::size_t out : g.ops[op].outputs)
      if (!g.values[out].alwaysLive()) freed -= (long long)g.values[out].numBytes();
    return freed;
  };
  // listSchedule does not tell us what it picked until the end, so track reads
  // through a wrapper that updates readsLeft when an op is chosen (it is the
  // `previous` of the next call).
  std::size_t lastSeen = std::numeric_limits<std::size_t>::max();
  return listSchedule(g, [&](std::size_t op, std::size_t previous, const std::vector<int>& w) {
    if (previous != lastSeen && previous != std::numeric_limits<std::size_t>::max()) {
      for (std::size_t in : g.ops[previous].inputs) --readsLeft[in];
      lastSeen = previous;
    }
    return score(op, previous, w);
  });
}

std::vector<std::size_t> shortestPath(const OpGraph& g) {
  // Distance of each op from the sources (ops with no predecessor), breadth first.
  std::vector<long long> depth(g.ops.size(), 0);
  for (std::size_t v : postOrder(g))
    for (auto [e, end] = boost::in_edges(v, g.graph); e != end; ++e)
      depth[v] = std::max(depth[v], depth[boost::source(*e, g.graph)] + 1);
  return listSchedule(g, [&](std::size_t op, std::size_t, const std::vector<int>&) { return -depth[op]; });
}

std::vector<std::size_t> clustering(const OpGraph& g) {
  return listSchedule(g, [&](std::size_t op, std::size_t previous, const std::vector<int>&) -> long long {
    if (previous == std::numeric_limits<std::size_t>::max()) return 0;
    return boost::edge(previous, op, g.graph).second ? 1 : 0;
  });
}

}  // namespace

const std::vector<std::string>& schedulingAlgorithms() {
  static const std::vector<std::string> names = {"post_order", "look_ahead", "shortest_path", "clustering"};
  return names;
}

std::uint64_t peakLivenessBytes(const OpGraph& g, const std::vector<std::size_t>& order) {
  std::vector<std::size_t> position(g.ops.size());
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  std::vector<long long> delta(order.size() + 1, 0);
  const auto r = readers(g);
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    if (g.values[v].alwaysLive() || g.producerOf[v] >= g.ops.size()) continue;
    const std::size_t born = position[g.producerOf[v]];
    std::size_t dies = born;
    for (std::size_t op : r[v]) dies = std::max(dies, position[op]);
    delta[born] += (long long)g.values[v].numBytes();
    delta[dies + 1] -= (long long)g.values[v].numBytes();
  }
  long long live = 0, peak = 0;
  for (std::size_t i = 0; i < order.size(); ++i) peak = std::max(peak, live += delta[i]);
  return std::uint64_t(peak);
}

Schedule scheduleOps(const OpGraph& g, const std::string& algorithm) {
  Schedule s;
  s.algorithm = algorithm;
  if (algorithm == "post_order") s.order = postOrder(g);
  else if (algorithm == "look_ahead") s.order = lookAhead(g);
  else if (algorithm == "shortest_path") s.order = shortestPath(g);
  else if (algorithm == "clustering") s.order = clustering(g);
  else if (algorithm == "choose_best") {
    Schedule best;
    for (const std::string& name : schedulingAlgorithms()) {
      Schedule c = scheduleOps(g, name);
      if (best.order.empty() || c.peakLivenessBytes < best.peakLivenessBytes) best = c;
    }
    return best;
  } else {
    throw std::invalid_argument("unknown scheduling algorithm '" + algorithm +
                                "' (expected post_order, look_ahead, shortest_path, clustering or choose_best)");
  }
  g.checkTopological(s.order);
  s.peakLivenessBytes = peakLivenessBytes(g, s.order);
  return s;
}

}  // namespace ipusim::scheduler
