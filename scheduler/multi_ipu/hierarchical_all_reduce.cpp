#include "scheduler/multi_ipu/hierarchical_all_reduce.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace ipusim::scheduler {
namespace {

// Appends `steps` into `merged` step by step, each step renamed `stage/<s>`
// (the rings of every POD, or of every local position, move at once).
void mergeStage(std::vector<CollectiveStep>& merged, std::size_t first, const std::string& stage,
                std::vector<CollectiveStep> steps) {
  if (merged.size() < first + steps.size()) merged.resize(first + steps.size());
  for (std::size_t s = 0; s < steps.size(); ++s) {
    CollectiveStep& into = merged[first + s];
    into.what = stage + "/" + std::to_string(s);
    into.copy.insert(into.copy.end(), steps[s].copy.begin(), steps[s].copy.end());
    into.vertices.insert(into.vertices.end(), std::make_move_iterator(steps[s].vertices.begin()),
                         std::make_move_iterator(steps[s].vertices.end()));
  }
}

void append(std::vector<CollectiveStep>& all, std::vector<CollectiveStep> more) {
  for (CollectiveStep& step : more) all.push_back(std::move(step));
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

  std::vector<CollectiveStep> steps, stage;
  for (std::uint32_t q = 0; q < pods; ++q)
    mergeStage(stage, 0, "pod_reduce_scatter",
               ringReduceScatterOver(data, received, replicas, podRings[q], workerContexts, chunks));
  append(steps, std::move(stage));
  stage.clear();
  for (std::uint32_t p = 0; p < perPod; ++p)
    mergeStage(stage, 0, "gw_reduce_scatter",
               ringReduceScatterOver(data, received, replicas, gwRings[p], workerContexts, gwChunks[p]));
  append(steps, std::move(stage));
  stage.clear();
  if (meanScale != 0) {
    CollectiveStep mean;
    mean.what = "mean";
    for (std::uint32_t p = 0; p < perPod; ++p) {
      CollectiveStep one = scaleOwnedChunksOver(data, replicas, gwRings[p], workerContexts, gwChunks[p], meanScale);
      for (ir::Vertex& v : one.vertices) mean.vertices.push_back(std::move(v));
    }
    steps.push_back(std::move(mean));
  }
  for (std::uint32_t p = 0; p < perPod; ++p)
    mergeStage(stage, 0, "gw_all_gather", ringAllGatherOver(data, replicas, gwRings[p], gwChunks[p]));
  append(steps, std::move(stage));
  stage.clear();
  for (std::uint32_t q = 0; q < pods; ++q)
    mergeStage(stage, 0, "pod_all_gather", ringAllGatherOver(data, replicas, podRings[q], chunks));
  append(steps, std::move(stage));
  return steps;
}

}  // namespace ipusim::scheduler
