#include "scheduler/multi_ipu/hierarchical_all_reduce.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace ipusim::scheduler {
namespace {

void append(std::vector<CollectiveStep>& all, std::vector<CollectiveStep> more) {
  for (CollectiveStep& step : more) all.push_back(std::move(step));
}

// One stage: `rings` rings moving at once (the rings of every POD, or of
// every local position), ring i's steps ringSteps(i) merged step by step,
// step s named `name/<s>`, appended to `steps`.
template <typename RingSteps>
void addStage(std::vector<CollectiveStep>& steps, const std::string& name, std::uint32_t rings, RingSteps ringSteps) {
  std::vector<CollectiveStep> stage;
  for (std::uint32_t i = 0; i < rings; ++i) mergeSteps(stage, ringSteps(i));
  for (std::size_t s = 0; s < stage.size(); ++s) stage[s].what = name + "/" + std::to_string(s);
  append(steps, std::move(stage));
}

}  // namespace

Chunks subChunks(const std::vector<ElementRange>& chunk, std::uint32_t parts) {
  Chunks out(parts);
  for (const ElementRange& r : chunk) {
    const std::uint64_t n = r.end - r.begin;
    for (std::uint32_t j = 0; j < parts; ++j)
      out[j].push_back({r.begin + n * j / parts, r.begin + n * (j + 1) / parts});
  }
  return out;
}

std::vector<CollectiveStep> podAllReduce(const ir::Tensor& data, const ir::Tensor& received, std::uint32_t replicas,
                                         std::uint32_t pods, std::uint32_t workerContexts, const Chunks& chunks,
                                         double meanScale) {
  if (pods == 0 || replicas % pods)
    throw std::invalid_argument("all-reduce over PODs: " + std::to_string(replicas) +
                                " replicas are not a multiple of " + std::to_string(pods) +
                                " PODs (gwLink.ipusPerPod: PODs of equal size)");
  const std::uint32_t perPod = replicas / pods;
  if (chunks.size() != perPod)
    throw std::invalid_argument("all-reduce over PODs: " + std::to_string(chunks.size()) + " chunks for " +
                                std::to_string(perPod) + " replicas per POD");
  const std::vector<std::uint32_t> local = ladderRing(perPod);
  if (pods == 1) {
    std::vector<CollectiveStep> steps = ringReduceScatterOver(data, received, replicas, local, workerContexts, chunks);
    if (meanScale != 0) steps.push_back(scaleOwnedChunksOver(data, replicas, local, workerContexts, chunks, meanScale));
    append(steps, ringAllGatherOver(data, replicas, local, chunks));
    return steps;
  }
  std::vector<std::vector<std::uint32_t>> podRings(pods);  // POD q's ring
  for (std::uint32_t q = 0; q < pods; ++q)
    for (std::uint32_t l : local) podRings[q].push_back(q * perPod + l);
  std::vector<std::vector<std::uint32_t>> gwRings(perPod);  // local position p's ring over the PODs
  for (std::uint32_t p = 0; p < perPod; ++p)
    for (std::uint32_t q = 0; q < pods; ++q) gwRings[p].push_back(q * perPod + local[p]);
  std::vector<Chunks> gwChunks(perPod);  // position p's owned chunk, cut over the PODs
  for (std::uint32_t p = 0; p < perPod; ++p) gwChunks[p] = subChunks(chunks[(p + 1) % perPod], pods);

  std::vector<CollectiveStep> steps;
  addStage(steps, "pod_reduce_scatter", pods, [&](std::uint32_t q) {
    return ringReduceScatterOver(data, received, replicas, podRings[q], workerContexts, chunks);
  });
  addStage(steps, "gw_reduce_scatter", perPod, [&](std::uint32_t p) {
    return ringReduceScatterOver(data, received, replicas, gwRings[p], workerContexts, gwChunks[p]);
  });
  if (meanScale != 0) {
    CollectiveStep mean;
    mean.what = "mean";
    for (std::uint32_t p = 0; p < perPod; ++p) {
      CollectiveStep one = scaleOwnedChunksOver(data, replicas, gwRings[p], workerContexts, gwChunks[p], meanScale);
      for (ir::Vertex& v : one.vertices) mean.vertices.push_back(std::move(v));
    }
    steps.push_back(std::move(mean));
  }
  addStage(steps, "gw_all_gather", perPod,
           [&](std::uint32_t p) { return ringAllGatherOver(data, replicas, gwRings[p], gwChunks[p]); });
  addStage(steps, "pod_all_gather", pods,
           [&](std::uint32_t q) { return ringAllGatherOver(data, replicas, podRings[q], chunks); });
  return steps;
}

}  // namespace ipusim::scheduler
