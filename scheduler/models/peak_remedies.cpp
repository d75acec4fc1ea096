#include "scheduler/models/peak_remedies.hpp"

#include "model/ir/tile_memory_usage.hpp"
#include "scheduler/lowering/plan_temporaries.hpp"
#include "scheduler/models/auto_checkpoints.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace ipusim::scheduler {
namespace {

std::uint64_t liveAtPeak(const LivePeak& peak, const std::string& category) {
  for (const auto& [c, bytes] : peak.categories)
    if (c == category) return bytes;
  return 0;
}

std::uint64_t alwaysLive(const ir::TileMemoryUsage& u, const std::string& category) {
  for (const ir::CategoryBytes& c : u.categories)
    if (c.alwaysLive && c.category == category) return c.bytes;
  return 0;
}

// The largest tensor live at the peak that `is` takes, among those the summary lists ("" if none is).
template <typename Is>
std::string largestOf(const ir::Executable& exe, const LivePeak& peak, Is is) {
  for (std::size_t i = 0; i < std::min(kLivePeakTensorsListed, peak.live.size()); ++i)
    if (is(exe.tensors[peak.live[i].first]))
      return ", the largest '" + ir::nameForSummary(exe.tensors[peak.live[i].first].name) + "'";
  return "";
}

// The temporaries live at the peak that a matmul or convolution plan made (lowering/plan_temporaries.hpp).
std::uint64_t planTemporariesAtPeak(const ir::Executable& exe, const LivePeak& peak) {
  std::uint64_t bytes = 0;
  for (const auto& [id, onTile] : peak.live)
    if (exe.tensors[id].category == "temporaries" && isPlanTemporary(exe.tensors[id].name)) bytes += onTile;
  return bytes;
}

std::string proportion(double p) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", p);
  return text;
}

}  // namespace

std::string peakRemedies(const Workload& w, const ir::Executable& exe, const WorstTile& worst,
                         std::uint64_t capacity) {
  std::vector<std::pair<std::uint64_t, std::string>> ways;  // (bytes it would shrink, the way)
  const auto offer = [&](std::uint64_t bytes, std::string way) {
    if (bytes >= capacity / 8) ways.push_back({bytes, std::move(way)});
  };
  const std::uint64_t planned = planTemporariesAtPeak(exe, worst.peak);
  const auto isPlanned = [](const ir::Tensor& t) { return isPlanTemporary(t.name); };
  offer(planned, "a lower ipu.available_memory_proportion (now " + proportion(w.ipu.availableMemoryProportion) +
                     ": the share of a tile a matmul or convolution plan may use for its operand copies and "
                     "partials; " + std::to_string(planned) + " bytes of theirs are live at the peak" +
                     largestOf(exe, worst.peak, isPlanned) + ")");
  const std::uint64_t activations = liveAtPeak(worst.peak, "activations");
  if (w.task == Task::Fit && recomputes(w)) {
    const std::string key = w.pipeline.enabled()
                                ? "checkpoints inside the pipeline's stages (training.recompute_checkpoints, with "
                                  "pipeline.recomputation_mode RecomputeAndBackpropagateInterleaved"
                                : "more recomputation checkpoints (training.recompute_checkpoints";
    const auto isActivation = [](const ir::Tensor& t) { return t.category == "activations"; };
    offer(activations, key + ": " + std::to_string(activations) +
                           " bytes of activations kept for the backward pass are live at the peak" +
                           largestOf(exe, worst.peak, isActivation) + ")");
  }
  const std::uint64_t weights = alwaysLive(worst.usage, "weights"), gradients = alwaysLive(worst.usage, "gradients");
  offer(weights + gradients,
        std::string("more IPUs for the layers (") +
            (w.pipeline.enabled() ? "pipeline stages" : "model shards or pipeline stages") + ": the weights take " +
            std::to_string(weights) + " bytes of the tile" +
            (gradients ? " and the gradients kept between its passes " + std::to_string(gradients) : std::string()) +
            ", always live)");
  std::stable_sort(ways.begin(), ways.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string all;
  for (const auto& [bytes, way] : ways) all += (all.empty() ? "" : ", ") + way;
  return all;
}

}  // namespace ipusim::scheduler
