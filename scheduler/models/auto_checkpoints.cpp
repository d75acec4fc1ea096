#include "scheduler/models/auto_checkpoints.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ipusim::scheduler {

std::vector<std::string> autoRecomputeCheckpoints(const Workload& w) {
  const std::size_t n = w.layers.size();
  // Per layer i: the earliest value read after it (a layer index; the
  // model's inputs come before every layer). The loss reads the outputs.
  constexpr std::int64_t kModelInputs = -1;
  auto index = [](std::size_t input) { return isModelInput(input) ? kModelInputs : std::int64_t(input); };
  std::vector<std::int64_t> earliestAfter(n, std::numeric_limits<std::int64_t>::max());
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  for (std::size_t o : modelOutputs(w)) earliest = std::min(earliest, std::int64_t(o));
  for (std::size_t i = n; i-- > 0;) {
    earliestAfter[i] = earliest;
    const LayerSpec& l = w.layers[i];
    if (l.inputs.empty()) earliest = std::min(earliest, i ? std::int64_t(i - 1) : kModelInputs);
    for (std::size_t input : l.inputs) earliest = std::min(earliest, index(input));
  }
  const std::vector<std::size_t> outputs = modelOutputs(w);
  std::vector<std::string> candidates;
  // (Not a RecomputationCheckpoint layer: its output is its input's, it
  // has no op whose output could be kept; the layer it reads is the
  // candidate.)
  for (std::size_t i = 0; i < n; ++i)
    if (earliestAfter[i] >= std::int64_t(i) && std::find(outputs.begin(), outputs.end(), i) == outputs.end() &&
        w.layers[i].kind != layer_kind::kRecomputationCheckpoint)
      candidates.push_back(w.layers[i].name);
  if (candidates.size() < 2) return {};
  const auto every = std::size_t(std::ceil(std::sqrt(double(candidates.size()))));
  std::vector<std::string> chosen;
  for (std::size_t k = every - 1; k < candidates.size(); k += every) chosen.push_back(candidates[k]);
  return chosen;
}

RecomputeSegments recomputeSegments(const Workload& w) {
  const std::vector<std::string>& checkpoints = w.training.recomputeCheckpoints;
  const bool stages = w.pipeline.enabled() && w.pipeline.recomputes();
  // A checkpoint no layer follows (but RecomputationCheckpoint layers passing
  // it on) cuts nothing: the segment it would end is the last one's, whose
  // backward pass starts right after its forward pass, so recomputing it
  // saved no memory and cost a forward pass (and in a pipeline recomputed
  // the last stage, which is never recomputed).
  std::size_t lastComputing = 0;
  for (std::size_t i = 0; i < w.layers.size(); ++i)
    if (w.layers[i].kind != layer_kind::kRecomputationCheckpoint) lastComputing = i;
  RecomputeSegments segments;
  std::size_t segment = 0;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const LayerSpec& l = w.layers[i];
    // A stage's first layer starts a segment (unless a checkpoint just ended one).
    const bool newStage = stages && i > 0 && *l.stage != *w.layers[i - 1].stage;
    if (newStage && segments.ofLayer.back() == segment) ++segment;
    segments.ofLayer.push_back(segment);
    if (std::find(checkpoints.begin(), checkpoints.end(), l.name) == checkpoints.end()) continue;
    if (i < lastComputing) ++segment;
    else segments.cuttingNothing.push_back(l.name);
  }
  segments.last = segment;
  return segments;
}

bool recomputes(const Workload& w) {
  return w.task == Task::Fit && (!w.training.recomputeCheckpoints.empty() || w.pipeline.recomputes());
}

Workload withAutoRecomputation(const Workload& w) {
  Workload recomputing = w;
  if (w.pipeline.enabled()) recomputing.pipeline.recomputationMode = autoRecomputationMode(w.pipeline.schedule);
  else recomputing.training.recomputeCheckpoints = autoRecomputeCheckpoints(w);
  return recomputing;
}

std::string recomputationDescription(const Workload& w) {
  if (!recomputes(w)) return "";
  const std::size_t n = w.training.recomputeCheckpoints.size();
  const std::string checkpoints = "from " + std::to_string(n) + " checkpoint" + (n == 1 ? "" : "s");
  if (!w.pipeline.enabled()) return checkpoints + " (training.recompute_checkpoints)";
  return "each stage's forward pass" + (n ? " " + checkpoints : std::string()) + " (pipeline.recomputation_mode " +
         w.pipeline.recomputationMode + ")";
}

}  // namespace ipusim::scheduler
