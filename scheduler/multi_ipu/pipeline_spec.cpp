#include "scheduler/multi_ipu/pipeline_spec.hpp"

#include <algorithm>
#include <set>

namespace ipusim::scheduler {
namespace {

std::string layerKey(std::size_t i, const char* key) {
  return "model.layers[" + std::to_string(i) + "]." + key;
}

}  // namespace

namespace {

// pipeline.recomputation_mode, as TF's RecomputationMode documents it
// (tensorflow/python/ipu/ops/pipelining_ops.py): RecomputeThenBackpropagate
// is supported by the Grouped and Interleaved schedules and is their
// default, RecomputeAndBackpropagateInterleaved by Grouped and Sequential
// and is Sequential's; Auto takes the schedule's default.
void parseRecomputationMode(const WorkloadReader& p, PipelineSpec& spec) {
  if (!p.has("recomputation_mode")) return;
  const std::string mode = p.string("recomputation_mode", "", {"Auto", kRecomputeThenBackpropagate,
                                                               kRecomputeAndBackpropagateInterleaved});
  if (mode == "Auto") {
    spec.recomputationMode = autoRecomputationMode(spec.schedule);
    return;
  }
  const bool supported = mode == kRecomputeThenBackpropagate ? spec.schedule != "sequential"
                                                             : spec.schedule != "interleaved";
  if (!supported)
    p.fail(p.key("recomputation_mode"),
           "\"" + mode + "\" is not supported by the " + spec.schedule + " schedule (TF's RecomputationMode: " +
               (mode == kRecomputeThenBackpropagate ? "grouped and interleaved only" : "grouped and sequential only") +
               "); expected \"Auto\" or " +
               (mode == kRecomputeThenBackpropagate ? "\"RecomputeAndBackpropagateInterleaved\""
                                                    : "\"RecomputeThenBackpropagate\""));
  spec.recomputationMode = mode;
}

}  // namespace

void parsePipeline(const WorkloadReader& top, Workload& w) {
  if (!top.has("pipeline")) {
    for (std::size_t i = 0; i < w.layers.size(); ++i)
      if (w.layers[i].stage)
        top.fail(layerKey(i, "stage"), "needs the workload's \"pipeline\" key (schedule, gradient_accumulation_count, "
                                       "device_mapping)");
    return;
  }
  const WorkloadReader p = top.object("pipeline");
  p.allowOnly({"schedule", "gradient_accumulation_count", "device_mapping", "recomputation_mode"});
  PipelineSpec& spec = w.pipeline;
  spec.schedule = p.string("schedule", spec.schedule, {"grouped", "interleaved", "sequential"});
  parseRecomputationMode(p, spec);

  // Stages in layer order, from 0, without gaps.
  std::uint32_t previous = 0;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const LayerSpec& l = w.layers[i];
    if (!l.stage)
      top.fail(layerKey(i, "stage"), "missing: in a pipelined model every layer names its stage (0, 1, ...)");
    if (l.shard)
      top.fail(layerKey(i, "shard"), "give stages and pipeline.device_mapping in a pipelined model, not shard");
    const std::uint32_t s = *l.stage;
    if (i == 0 && s != 0)
      top.fail(layerKey(i, "stage"), std::to_string(s) + ": the first layer must be stage 0");
    if (i > 0 && s < previous)
      top.fail(layerKey(i, "stage"), std::to_string(s) + " after stage " + std::to_string(previous) +
                                         ": stages must follow the layer order (each stage takes the previous "
                                         "stage's outputs)");
    if (i > 0 && s > previous + 1)
      top.fail(layerKey(i, "stage"), std::to_string(s) + " after stage " + std::to_string(previous) +
                                         ": stages are numbered without gaps (expected " + std::to_string(previous) +
                                         " or " + std::to_string(previous + 1) + ")");
    previous = s;
  }
  spec.stages = previous + 1;
  if (spec.stages < 2)
    top.fail("model.layers[i].stage", "a pipeline requires at least two stages, found one (stage 0)");

  // device_mapping: one IPU of ipu.num_ipus per stage, default stage i on IPU i.
  if (p.has("device_mapping")) {
    const std::vector<std::int64_t> mapping = p.integers("device_mapping");
    if (mapping.size() != spec.stages)
      p.fail(p.key("device_mapping"), std::to_string(mapping.size()) + " entries for " + std::to_string(spec.stages) +
                                          " stages: each stage must be mapped to one IPU");
    std::set<std::int64_t> seen;
    for (std::size_t s = 0; s < mapping.size(); ++s) {
      const std::string key = p.key("device_mapping") + "[" + std::to_string(s) + "]";
      if (mapping[s] < 0 || mapping[s] >= std::int64_t(w.ipu.numIpus))
        p.fail(key, "IPU " + std::to_string(mapping[s]) + " does not exist: expected 0 to " +
                        std::to_string(w.ipu.numIpus - 1) + " (ipu.num_ipus is " + std::to_string(w.ipu.numIpus) + ")");
      if (!seen.insert(mapping[s]).second)
        p.fail(key, "IPU " + std::to_string(mapping[s]) +
                        " already runs another stage: several stages on one IPU are not modelled");
      spec.deviceMapping.push_back(std::uint32_t(mapping[s]));
    }
  } else {
    for (std::uint32_t s = 0; s < spec.stages; ++s) spec.deviceMapping.push_back(s);
  }

  // The gradient accumulation count each schedule needs.
  if (!p.has("gradient_accumulation_count"))
    p.fail(p.key("gradient_accumulation_count"), "missing: a pipeline runs this many mini-batches per weight update");
  const std::uint32_t n = p.count32("gradient_accumulation_count", 1, true);
  const std::uint32_t multiple = spec.schedule == "grouped" ? 2 * spec.stages
                                 : spec.schedule == "interleaved" ? spec.stages
                                                                  : 1;
  if (n % multiple)
    p.fail(p.key("gradient_accumulation_count"),
           std::to_string(n) + " is not a multiple of " + std::to_string(multiple) + ": the " + spec.schedule +
               " schedule needs a multiple of " + (spec.schedule == "grouped" ? "2 x " : "") + "the " +
               std::to_string(spec.stages) + " stages");
  const WorkloadReader training = top.object("training");
  if (training.has("gradient_accumulation_count") && w.training.gradientAccumulationCount != n)
    training.fail("training.gradient_accumulation_count",
                  std::to_string(w.training.gradientAccumulationCount) + " differs from pipeline.gradient_accumulation_count (" +
                      std::to_string(n) + "): a pipeline accumulates its own mini-batches; give the count once");
  if (w.training.stepsPerExecution % n)
    p.fail(p.key("gradient_accumulation_count"),
           std::to_string(n) + " must divide training.steps_per_execution (" +
               std::to_string(w.training.stepsPerExecution) + (w.training.feeds ? ")" : ", 1 without feeds)") +
               (w.task == Task::Fit
                    ? ": the weights are updated within one execution"
                    : ": an execution runs whole groups of that many mini-batches through the stages, as fit's do"));
  w.training.gradientAccumulationCount = n;
  for (LayerSpec& l : w.layers) l.shard = spec.deviceMapping[*l.stage];
  for (const LayerSpec& l : w.layers)
    if (l.kind == layer_kind::kDropout || l.kind == layer_kind::kGaussianNoise || l.kind == layer_kind::kGaussianDropout)
      top.fail("pipeline", "layer '" + l.name + "' is a " + l.kind + " layer: pipelining models without dropout or noise "
                                                 "only (its draws follow the step count, not the mini-batch)");
  // The penalties are one reduction over every stage's weights and outputs,
  // which the stage passes do not split (not modelled).
  for (const LayerSpec& l : w.layers)
    if (!l.regularizers.empty())
      top.fail("pipeline", "layer '" + l.name + "' has a " + l.regularizers.begin()->first +
                               " regularizer: pipelining models without regularizers only (the penalties' sum "
                               "reads every stage)");
}

}  // namespace ipusim::scheduler
