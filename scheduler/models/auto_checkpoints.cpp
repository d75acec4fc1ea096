#include "scheduler/models/auto_checkpoints.hpp"

#include "scheduler/graph/op_graph.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

namespace ipusim::scheduler {

namespace {

// The articulation layers (see the header), in layer order.
std::vector<std::size_t> articulationLayers(const Workload& w) {
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
  std::vector<std::size_t> candidates;
  // (Not a RecomputationCheckpoint layer: its output is its input's, it
  // has no op whose output could be kept; the layer it reads is the
  // candidate.)
  for (std::size_t i = 0; i < n; ++i)
    if (earliestAfter[i] >= std::int64_t(i) && std::find(outputs.begin(), outputs.end(), i) == outputs.end() &&
        w.layers[i].kind != layer_kind::kRecomputationCheckpoint)
      candidates.push_back(i);
  return candidates;
}

// Every ceil(sqrt(m))-th of the m candidates (Chen et al.'s sqrt(n) segments).
std::vector<std::string> everySqrtTh(const Workload& w, const std::vector<std::size_t>& candidates) {
  std::vector<std::string> chosen;
  if (candidates.empty()) return chosen;
  const auto every = std::size_t(std::ceil(std::sqrt(double(candidates.size()))));
  for (std::size_t k = every - 1; k < candidates.size(); k += every) chosen.push_back(w.layers[candidates[k]].name);
  return chosen;
}

// Of `chosen`, the checkpoints whose segment a fit recomputes an op of,
// from its training graph (graph/recomputation.hpp), as the compiled step's
// summary lists them (recomputationSummary). Dropping the others only joins
// their segments to the next ones, which then recompute more.
std::vector<std::string> cutting(const Workload& w, const std::vector<std::string>& chosen) {
  if (chosen.empty()) return chosen;
  Workload fit = w;
  fit.task = Task::Fit;
  fit.training.recomputeCheckpoints = chosen;
  std::vector<std::string> recomputedLayers;
  for (const Op& op : buildTrainingGraph(fit).ops)
    if (op.recomputed) recomputedLayers.push_back(op.layer);
  return recomputationSummary(fit, recomputedLayers).checkpoints;
}

}  // namespace

std::vector<std::string> autoRecomputeCheckpoints(const Workload& w) {
  const std::vector<std::size_t> candidates = articulationLayers(w);
  if (candidates.size() < 2) return {};
  const std::vector<std::string> chosen = everySqrtTh(w, candidates);
  try {
    // Only checkpoints that cut something: a candidate before which every
    // activation the backward pass reads is kept anyway (a flatten of the
    // model's input, a dense layer right after it, a frozen base that the
    // backward pass never enters) recomputes nothing. "auto" picked such
    // layers on small MLPs (flatten, dense, dense: 'dense') and the step
    // then recomputed no op.
    std::vector<std::string> kept = cutting(w, chosen);
    if (!kept.empty()) return kept;
    // None of those cut: the same choice among the candidates from the
    // first at which a checkpoint alone cuts (flatten, d1, d2, out: 'd1'
    // cuts nothing, 'd2' recomputes d1's output). A checkpoint at a
    // candidate cuts when an activation before it that the backward pass
    // reads is not its own output, and so does one at every later
    // candidate: the first is found by halving.
    std::size_t first = 0, none = candidates.size();
    while (first < none) {
      const std::size_t middle = first + (none - first) / 2;
      if (cutting(w, {w.layers[candidates[middle]].name}).empty()) first = middle + 1;
      else none = middle;
    }
    const std::vector<std::size_t> cutters(candidates.begin() + std::ptrdiff_t(first), candidates.end());
    return cutting(w, everySqrtTh(w, cutters));
  } catch (const std::exception&) {
    // A workload whose training graph cannot be built is refused by the
    // compile, with its own message; until then the choice stands unchecked.
    return chosen;
  }
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
    if (i >= lastComputing) {
      segments.cuttingNothing.push_back(
          {l.name, "it is the model's last layer, whose backward pass starts right after it "
                   "(training.recompute_checkpoints: expected layers before the last)"});
      continue;
    }
    // A stage's last layer (the next computing layer is another stage's):
    // the stage's own cut lies there, and the outputs another stage reads
    // are kept already, so the checkpoint changes nothing.
    std::size_t next = i + 1;
    while (w.layers[next].kind == layer_kind::kRecomputationCheckpoint) ++next;
    if (stages && *w.layers[next].stage != *l.stage) {
      segments.cuttingNothing.push_back(
          {l.name, "it is the last layer of pipeline stage " + std::to_string(*l.stage) +
                       ", whose outputs the stage keeps already (training.recompute_checkpoints: expected layers "
                       "within a stage)"});
      continue;  // (the next stage's first layer starts the next segment)
    }
    ++segment;
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

RecomputationSummary recomputationSummary(const Workload& w, const std::vector<std::string>& recomputedLayers) {
  RecomputationSummary r;
  r.ops = recomputedLayers.size();
  if (r.ops == 0 || !recomputes(w)) return r;
  if (w.pipeline.enabled()) r.mode = w.pipeline.recomputationMode;
  const RecomputeSegments segments = recomputeSegments(w);
  std::set<std::size_t> recomputing;  // the segments holding a recomputed op
  std::map<std::string, std::size_t> segmentOf;
  for (std::size_t i = 0; i < w.layers.size(); ++i) segmentOf[w.layers[i].name] = segments.ofLayer[i];
  for (const std::string& layer : recomputedLayers)
    if (auto it = segmentOf.find(layer); it != segmentOf.end()) recomputing.insert(it->second);
  for (const std::string& checkpoint : w.training.recomputeCheckpoints) {
    const bool uncut = std::any_of(segments.cuttingNothing.begin(), segments.cuttingNothing.end(),
                                   [&](const RecomputeSegments::Uncut& u) { return u.layer == checkpoint; });
    // A checkpoint ends its own segment (recomputeSegments).
    if (auto it = segmentOf.find(checkpoint); !uncut && it != segmentOf.end() && recomputing.count(it->second))
      r.checkpoints.push_back(checkpoint);
  }
  return r;
}

std::string describe(const RecomputationSummary& r) {
  const std::size_t n = r.checkpoints.size();
  const std::string checkpoints = "from " + std::to_string(n) + " checkpoint" + (n == 1 ? "" : "s");
  if (r.mode.empty()) return checkpoints + " (training.recompute_checkpoints)";
  return "each stage's forward pass" + (n ? " " + checkpoints : std::string()) + " (pipeline.recomputation_mode " +
         r.mode + ")";
}

}  // namespace ipusim::scheduler
