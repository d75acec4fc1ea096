#include "scheduler/compiler.hpp"
#include "scheduler/models/peak_remedies.hpp"

#include "model/ir/code_memory.hpp"
#include "scheduler/multi_ipu/gradient_accumulation.hpp"
#include "scheduler/models/layer_shapes.hpp"
#include "scheduler/lowering/lowering.hpp"
#include "scheduler/models/auto_checkpoints.hpp"
#include "scheduler/models/memory_estimate.hpp"
#include "model/hardware/remote_buffer_bytes.hpp"
#include "model/system_preset.hpp"
#include "scheduler/models/workload_limits.hpp"
#include "scheduler/planning/memory_plan.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/multi_ipu/pipelining.hpp"
#include "scheduler/multi_ipu/replication.hpp"
#include "scheduler/graph/schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>

namespace ipusim::scheduler {
namespace {

std::uint64_t vertexCount(const ir::Executable& exe) {
  std::uint64_t vertices = 0;
  for (const ir::ComputeSet& cs : exe.computeSets) vertices += cs.vertices.size();
  return vertices;
}

// An estimate's bytes as a reported count (saturated: an estimate of a model
// allowed out of memory may pass 64 bits).
std::uint64_t modelBytes(long double bytes) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  return bytes >= (long double)kMax ? kMax : std::uint64_t(bytes + 0.5L);
}

ir::Id addStream(ir::Executable& exe, const std::string& name, ir::StreamDirection dir, ir::DType type,
                 std::uint64_t elements, std::uint32_t depth) {
  ir::Stream s;
  s.id = ir::Id(exe.streams.size());
  s.name = name;
  s.direction = dir;
  s.dtype = type;
  s.elementsPerCopy = elements;
  s.bufferDepth = depth;
  s.debug = {"input", name};
  exe.streams.push_back(s);
  return s.id;
}

ir::Program streamCopy(const std::string& name, ir::Id stream, ir::Id tensor, std::uint64_t elements, const std::string& layer) {
  ir::Program p;
  p.kind = ir::ProgramKind::StreamCopy;
  p.name = name;
  p.stream = stream;
  p.tensor = {tensor, 0, elements};
  p.debug = {layer, name};
  return p;
}

// The updates on the accumulated gradients, then the accumulators zeroed.
ir::Id addApplyGradients(ir::Executable& exe, const std::vector<ir::Id>& updateSequences, ir::Id zero) {
  ir::Program apply;
  apply.kind = ir::ProgramKind::Sequence;
  apply.name = "apply_gradients";
  apply.children = updateSequences;
  apply.children.push_back(zero);
  apply.debug = {"training", "apply_gradients"};
  return exe.addProgram(apply);
}

// With feeds, steps_per_execution / accumulation runs of `body` (then, in
// outfeed mode LAST, the loss copy `lastLossCopy` once); without, `body`.
ir::Id addTrainingLoop(ir::Executable& exe, const Workload& w, ir::Id body, std::uint32_t accumulation,
                       ir::Id lastLossCopy) {
  if (!w.training.feeds) return body;
  ir::Program loop;
  loop.kind = ir::ProgramKind::Repeat;
  loop.name = "steps_per_execution";
  loop.count = w.training.stepsPerExecution / accumulation;
  loop.children = {body};
  loop.debug = {"training", "repeat"};
  ir::Id entry = exe.addProgram(loop);
  if (lastLossCopy == ir::kNoId) return entry;
  ir::Program outer;
  outer.kind = ir::ProgramKind::Sequence;
  outer.name = entryPointOf(w.task);
  outer.children = {entry, lastLossCopy};
  outer.debug = {"training", "train"};
  return exe.addProgram(outer);
}

// The entry point "validation": `body` (one step, or a pipeline's group of
// mini-batches) repeated `count` times, then in outfeed mode LAST the copy of
// `lastLoss` (the last step's loss and metrics) to the validation outfeed.
void addValidationEntryPoint(ir::Executable& exe, const CompiledWorkload& c, ir::Id body, std::uint64_t count,
                             bool lossLast, ir::Id lastLoss) {
  ir::Id entry = body;
  if (count > 1 || lossLast) {
    ir::Program loop;
    loop.kind = ir::ProgramKind::Repeat;
    loop.name = "validation_steps";
    loop.count = count;
    loop.children = {entry};
    loop.debug = {"validation", "repeat"};
    entry = exe.addProgram(loop);
  }
  if (lossLast) {
    ir::Program outer;
    outer.kind = ir::ProgramKind::Sequence;
    outer.name = "validation";
    outer.children = {entry, exe.addProgram(streamCopy("validation_loss", c.validationLossStream, lastLoss,
                                                       exe.streams[c.validationLossStream].elementsPerCopy, "validation"))};
    outer.debug = {"validation", "validation"};
    entry = exe.addProgram(outer);
  }
  exe.entryPoints.push_back({"validation", entry});
}

// Fit's validation (CompiledWorkload::validationOutfeed): entry point
// "validation", c.validationStepsPerRun steps of the validation pass's op
// Sequences, each a marked step reading its batch from the validation
// streams into the training step's input tensors and outfeeding its loss
// and metrics (in outfeed mode LAST, once after the loop), as evaluate's.
void addValidationEntry(ir::Executable& exe, const CompiledWorkload& c, LoweredStep& step,
                        const std::vector<ir::Id>& sequences, std::uint64_t imageElements, std::uint64_t labelElements,
                        bool lossLast) {
  std::vector<ir::Id> children{
      exe.addProgram(streamCopy("validation_images", c.validationImagesStream, step.images, imageElements, "input")),
      exe.addProgram(streamCopy("validation_labels", c.validationLabelsStream, step.labels, labelElements, "input"))};
  children.insert(children.end(), sequences.begin(), sequences.end());
  if (!lossLast)
    children.push_back(exe.addProgram(streamCopy("validation_loss", c.validationLossStream, step.validationLoss,
                                                 exe.streams[c.validationLossStream].elementsPerCopy, "validation")));
  step.useSpans[step.validationLoss].second = step.lastStep + 1;
  ir::Program seq;
  seq.kind = ir::ProgramKind::Sequence;
  seq.name = "validation_step";
  seq.children = children;
  seq.marksStep = true;
  seq.debug = {"validation", "step"};
  addValidationEntryPoint(exe, c, exe.addProgram(seq), c.validationStepsPerRun, lossLast, step.validationLoss);
}

// Pipelining: the step's op Sequences by stage and direction (an op's stage
// is its layer's; the loss's ops stay on the stage of the op before them, as
// the lowering places them); a backward op is one producing a gradient, or
// a recomputed one.
// `validation`: the validation pass's ops (OpGraph::firstValidationOp), else the step's others.
PipelineParts pipelineParts(const Workload& w, const OpGraph& graph, const Schedule& schedule,
                            const std::vector<ir::Id>& opSequences, const LoweredStep& step, std::uint32_t tilesPerIpu,
                            std::uint32_t ipusPerReplica, bool validation) {
  PipelineParts parts;
  parts.forward.resize(w.pipeline.stages);
  parts.backward.resize(w.pipeline.stages);
  parts.updates.resize(w.pipeline.stages);
  std::map<std::string, std::uint32_t> stageOfLayer;
  for (const LayerSpec& l : w.layers) stageOfLayer[l.name] = *l.stage;
  std::uint32_t stage = 0;
  for (std::size_t i = 0; i < schedule.order.size(); ++i) {
    const Op& op = graph.ops[schedule.order[i]];
    if (graph.isValidationOp(schedule.order[i]) != validation) continue;
    // (A recomputed op, which the schedule may run anywhere before the
    // backward op reading it, runs on its own stage and passes it to no other.)
    std::uint32_t opStage = stage;
    if (auto it = stageOfLayer.find(op.layer); it != stageOfLayer.end()) {
      opStage = it->second;
      if (!op.recomputed) stage = opStage;
    }
    if (isWeightUpdate(op.kind)) {
      parts.updates[opStage].push_back(opSequences[i]);
      continue;
    }
    // (A recomputed op runs in its stage's backward pass: graph/recomputation.hpp.)
    const bool backward = op.recomputed || std::any_of(op.outputs.begin(), op.outputs.end(), [&](std::size_t v) {
                            return graph.values[v].kind == ValueKind::Gradient;
                          });
    (backward ? parts.backward : parts.forward)[opStage].push_back(opSequences[i]);
  }
  parts.stageOfIpu.assign(ipusPerReplica, ~0u);
  for (std::uint32_t s = 0; s < w.pipeline.stages; ++s) parts.stageOfIpu[w.pipeline.deviceMapping[s]] = s;
  parts.tilesPerIpu = tilesPerIpu;
  parts.images = step.images;
  parts.labels = step.labels;
  parts.loss = validation ? step.validationLoss : step.loss;
  return parts;
}

// For a training step that ran out of memory keeping every activation (a
// fit that recomputes nothing): the same workload compiled again
// recomputing as "auto" would (withAutoRecomputation), out of memory
// allowed, and what that gives: whether it fits, its fullest tile, its
// estimated step against `stepCycles`. Empty for other workloads, or when
// "auto" finds no checkpoint.
std::string recomputationTrial(const Workload& w, const model::Target& target, std::uint64_t stepCycles) {
  if (w.task != Task::Fit || recomputes(w)) return "";
  Workload trial = withAutoRecomputation(w);
  if (!recomputes(trial)) return "";
  trial.allowOutOfMemory = true;
  const CompileReport r = compile(trial, target).report;
  // One replica's tiles, as the summary this sentence follows counts them
  // (the report counts every replica's).
  const std::uint32_t over = r.tilesOverCapacity / std::max<std::uint32_t>(1, replicasOf(trial));
  const double more = stepCycles ? 100.0 * (double(r.estimatedStepCycles) - double(stepCycles)) / double(stepCycles) : 0;
  char change[32];
  std::snprintf(change, sizeof change, "%+.1f%%", more);
  const std::string how =
      w.pipeline.enabled()
          ? "pipeline.recomputation_mode \"Auto\": " + trial.pipeline.recomputationMode
          : "training.recompute_checkpoints \"auto\": " + std::to_string(trial.training.recomputeCheckpoints.size()) +
                (trial.training.recomputeCheckpoints.size() == 1 ? " checkpoint" : " checkpoints");
  // (A pipeline whose stages but the last keep nothing but their inputs, a
  // first stage of one dense layer: the trial recomputes no op, the same step.)
  if (r.recomputation.ops == 0)
    return "\nWith recomputation (" + how + ") no op is recomputed (every activation the backward pass reads is kept "
           "already: a stage's input, a checkpoint's output or the model's input): it would not help this step.";
  return "\nWith recomputation (" + how + ") the step " +
         (over ? "still does not fit: " + std::to_string(over) + (over == 1 ? " tile" : " tiles") +
                     " over, the fullest "
               : std::string("fits: the fullest tile ")) +
         std::to_string(r.maxTileBytes) + " of " + std::to_string(target.tile.memoryBytes) + " bytes, an estimated step of " +
         std::to_string(r.estimatedStepCycles) + " cycles against " + std::to_string(stepCycles) + " (" + change + ").";
}

// The offloaded optimizer state (training.offload_optimizer_state) must fit
// the target's Streaming Memory. The device checks it again at load
// (model/hardware/streaming_memory.cpp, by the same rule:
// model/hardware/remote_buffer_bytes.hpp); checked here too, so that `ipusim compile` does not accept what
// `run` refuses (--arch ipu1 or --set streamingMemory.bytesPerIpu given on
// the command line, after the workload's own check of ipu.arch), and the
// refusal names the workload key.
void checkStreamingMemoryFits(const ir::Executable& exe, const model::Target& target) {
  if (exe.remoteBuffers.empty()) return;
  const std::uint32_t ipus = target.numIpus();
  std::vector<std::uint64_t> used(ipus, 0);
  for (const std::vector<std::uint64_t>& buffer : model::hardware::remoteBufferBytesPerIpu(exe, target))
    for (std::uint32_t ipu = 0; ipu < ipus; ++ipu)  // (saturating: the bytes of several huge buffers)
      used[ipu] += std::min(buffer[ipu], std::numeric_limits<std::uint64_t>::max() - used[ipu]);
  for (std::uint32_t ipu = 0; ipu < ipus; ++ipu) {
    if (!(double(used[ipu]) > target.streamingMemory.bytesPerIpu)) continue;
    // Only ipu1 (a C2 card) lacks Streaming Memory; an ipu2 with
    // --set streamingMemory.bytesPerIpu=0 was told to use "a target with
    // Streaming Memory (ipu2)", the target it had.
    const bool none = target.streamingMemory.bytesPerIpu == 0 && target.arch == "ipu1";
    throw std::invalid_argument(
        "training.offload_optimizer_state: the optimizer state takes " + std::to_string(used[ipu]) +
        " bytes of Streaming Memory on IPU " + std::to_string(ipu) + ", over streamingMemory.bytesPerIpu (" +
        std::to_string(std::uint64_t(target.streamingMemory.bytesPerIpu)) + " bytes on target " + target.arch +
        (none ? ": no Streaming Memory): expected a target with Streaming Memory (ipu2), or the state kept on the "
                "tiles (false)"
              : "): expected a larger streamingMemory.bytesPerIpu, or the state kept on the tiles (false)"));
  }
}

}  // namespace

model::Target targetFor(const Workload& w) {
  model::Target t = model::Target::preset(w.ipu.arch);
  if (!w.ipu.system.empty()) model::applySystem(t, w.ipu.system);
  if (w.ipu.tiles) t.set("tile.tilesPerIpu", std::to_string(w.ipu.tiles));
  t.set("ipuLink.numIpus", std::to_string(w.ipu.numIpus));
  if (w.ipu.ipusPerPod) t.gwLink.ipusPerPod = w.ipu.ipusPerPod;  // (over its system's)
  t.validate();
  return t;
}

std::size_t autoRecomputedOps(const Workload& w) {
  const Workload trial = withAutoRecomputation(w);
  if (!recomputes(trial)) return 0;
  const OpGraph graph = buildTrainingGraph(trial);
  return std::size_t(std::count_if(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.recomputed; }));
}

CompiledWorkload compile(const Workload& w, const CompileProgress& progress) {
  return compile(w, targetFor(w), progress);
}

CompiledWorkload compile(const Workload& original, const model::Target& target, const CompileProgress& reportProgress) {
  // The layers' shapes, inferred again: a caller may have changed a layer or
  // the input after the workload was read.
  Workload w = original;
  std::vector<std::vector<std::uint64_t>> inputs = modelInputShapes(w);
  if (w.inputs.size() < 2 && (elementsOf(inputs[0]) != w.dataset.features || inputs[0].empty()))
    inputs = {{w.dataset.features}};
  inferLayerShapes(w.layers, inputs, w.name, [&](std::size_t i, const std::string& key) {
    return "layer '" + w.layers[i].name + "'" + (key.empty() ? "" : ": " + key);
  });
  auto progress = [&](const char* stage) { if (reportProgress) reportProgress(stage); };
  // Sharding: a replica spans `shards` IPUs, each layer on its shard's.
  // Replication: the replica is compiled for the first IPUs' tiles and laid
  // out over the others after its memory plan.
  const std::uint32_t shards = ipusPerReplica(w);
  const std::uint32_t replicas = replicasOf(w);
  model::Target replicaTarget = target;
  if (w.ipu.numIpus > 1) {
    // (It said "expected a multiple of the IPUs one replica needs" of 2 IPUs
    // for a 1-IPU replica: the rule is that the two agree.)
    if (target.numIpus() != w.ipu.numIpus) {
      const std::string n = std::to_string(target.numIpus());
      throw std::invalid_argument(
          "ipu.num_ipus is " + std::to_string(w.ipu.numIpus) + " but the target has " + n +
          " IPUs (--ipus / ipuLink.numIpus): expected the same number" +
          (target.numIpus() % shards == 0
               ? " (ipu.num_ipus " + n + " runs the model on " + n + " IPUs)"
               : " (a multiple of the " + std::to_string(shards) + " IPUs one replica needs, which " + n + " is not)"));
    }
    replicaTarget.ipuLink.numIpus = shards;
    replicaTarget.gwLink.ipusPerPod = 0;  // one replica's IPUs: one POD
  }
  // PODs joined by GW-Links: each holds whole replicas (the all-reduce is staged in and across them).
  const std::uint32_t pods = target.numPods();
  if (pods > 1 && (target.gwLink.ipusPerPod % shards || replicas % pods))
    throw std::invalid_argument("gwLink.ipusPerPod is " + std::to_string(target.gwLink.ipusPerPod) +
                                ", not a multiple of the " + std::to_string(shards) +
                                " IPUs one replica needs: expected PODs of whole replicas (ipu.num_ipus " +
                                std::to_string(w.ipu.numIpus) + " in " + std::to_string(pods) + " PODs)");
  const std::uint32_t tiles = replicaTarget.totalTiles();
  std::map<std::string, std::uint32_t> tileBaseOfLayer;
  if (shards > 1) {
    for (const LayerSpec& layer : w.layers) tileBaseOfLayer[layer.name] = layer.shard * target.tile.tilesPerIpu;
    // The loss is computed where its output's logits are (as TF places a
    // sharded model's loss in its last shard's scope): the logits, often the
    // step's largest activation (a language model's vocabulary at every
    // step), never cross an IPU-Link.
    const std::vector<std::size_t> outputs = modelOutputs(w);
    const LayerSpec& first = w.layers[outputs.front()];
    tileBaseOfLayer["loss"] = first.shard * target.tile.tilesPerIpu;
    for (std::size_t o : outputs) tileBaseOfLayer["loss/" + w.layers[o].name] = w.layers[o].shard * target.tile.tilesPerIpu;
  }
  // Decided from the layer shapes before a single weight is drawn: a model
  // too big for the chip fails here, in milliseconds.
  const ModelMemoryEstimate memoryEstimate = estimateModelMemory(w, tiles);
  checkModelFits(w, replicaTarget, memoryEstimate);
  const bool fit = w.task == Task::Fit, predict = w.task == Task::Predict;
  const bool validation = fit && w.training.validation.enabled();
  // A pipelined validation runs the schedule's forward passes alone, its
  // mini-batches pipeline.gradient_accumulation_count at a time, as
  // pipelined evaluate does.
  if (validation && w.pipeline.enabled() && w.training.validationStepsPerRun() % w.training.gradientAccumulationCount)
    throw std::invalid_argument("training.validation.steps: " + std::to_string(w.training.validation.steps) +
                                " must be a multiple of pipeline.gradient_accumulation_count (" +
                                std::to_string(w.training.gradientAccumulationCount) +
                                "): a pipelined validation runs its mini-batches that many at a time");
  progress("building the op graph");
  OpGraph graph = buildTrainingGraph(w);
  progress("scheduling");
  Schedule schedule = scheduleOps(graph, w.scheduling);
  const bool pipelined = w.pipeline.enabled();
  // Gradient accumulation is the training's: evaluate and predict run each
  // batch alone, but for a pipeline's mini-batches, which pass its stages
  // as many at a time as in fit (pipeline.gradient_accumulation_count).
  const std::uint32_t accumulation = fit || pipelined ? w.training.gradientAccumulationCount : 1;
  if (fit)
    if (const std::string refusal = w.optimizer.multiIpuRefusal(replicas, accumulation > 1, pipelined); !refusal.empty())
      throw std::invalid_argument("optimizer: " + refusal);  // (parseWorkload names the file)
  // The all-reduce and gradient accumulation need every gradient before any update.
  if (fit && (replicas > 1 || accumulation > 1 || pipelined)) moveUpdatesLast(graph, schedule);
  const auto budget = std::uint64_t(double(target.tile.memoryBytes) * w.ipu.availableMemoryProportion);
  progress("planning and lowering");
  LoweredStep step = lowerStep(graph, schedule, replicaTarget, shards > 1 ? target.tile.tilesPerIpu : tiles, budget,
                               tileBaseOfLayer);
  std::vector<ir::Id> updateSequences, validationSequences;
  for (std::size_t i = 0; i < schedule.order.size(); ++i)
    if (isWeightUpdate(graph.ops[schedule.order[i]].kind)) updateSequences.push_back(step.opSequences[i]);
  // A validation pass's ops are the last of the schedule (OpGraph::firstValidationOp): its entry point's.
  const std::vector<ir::Id> allOpSequences = step.opSequences;
  while (!step.opSequences.empty() && graph.isValidationOp(schedule.order[step.opSequences.size() - 1])) {
    validationSequences.insert(validationSequences.begin(), step.opSequences.back());
    step.opSequences.pop_back();
  }

  CompiledWorkload c;
  c.target = target;
  ir::Executable& exe = step.exe;
  exe.name = w.name;
  exe.target = target.toJson();
  exe.options = nlohmann::json::object();
  const std::uint64_t batch = w.dataset.batchSize;
  const bool feeds = w.training.feeds;
  const bool lossLast = feeds && w.training.outfeedMode == "LAST";
  c.stepsPerRun = feeds ? w.training.stepsPerExecution : 1;
  c.imagesStream = addStream(exe, "images", ir::StreamDirection::HostToDevice,
                             w.dataset.vocabulary ? ir::DType::Int : ir::DType::Float,
                             batch * w.dataset.features, feeds ? w.training.prefetchDepth : 1);
  // Class indices (int), or targets (float, batch x LossSpec::targetWidth): LossSpec::classIndexLabels.
  const bool indices = w.loss.classIndexLabels();
  const std::uint64_t labelElements = indices ? batch * w.dataset.labelSteps : batch * w.loss.targetWidth(w.dataset.classes);
  // The outfeed carries the step's loss and accuracy (and a schedule's
  // learning rate), as Keras's outfeed carries loss and metrics.
  // (Predict's outfeed is its predictions, a row of c.predictionWidth values per example.)
  const std::uint64_t lossElements = graph.values[graph.loss].numElements();
  c.outfeed = graph.outfeed;
  if (predict) c.predictionWidth = graph.values[graph.loss].shape.back();
  else if (c.outfeed.size() != lossElements) throw std::logic_error("compile: the outfeed's values do not match its layout");
  if (!predict)
    c.labelsStream = addStream(exe, "labels", ir::StreamDirection::HostToDevice, indices ? ir::DType::Int : ir::DType::Float,
                               labelElements, feeds ? w.training.prefetchDepth : 1);
  c.lossStream = addStream(exe, predict ? "predictions" : "loss", ir::StreamDirection::DeviceToHost, ir::DType::Float,
                           lossElements, feeds ? w.training.outfeedBufferDepth : 1);
  const char* outfeedName = predict ? "predictions" : "loss";
  if (validation) {
    const std::uint64_t validationLossElements = graph.values[graph.validationLoss].numElements();
    c.validationOutfeed = graph.validationOutfeed;
    if (c.validationOutfeed.size() != validationLossElements)
      throw std::logic_error("compile: the validation outfeed's values do not match its layout");
    c.validationImagesStream = addStream(exe, "validation_images", ir::StreamDirection::HostToDevice,
                                         exe.streams[c.imagesStream].dtype, batch * w.dataset.features,
                                         feeds ? w.training.prefetchDepth : 1);
    c.validationLabelsStream = addStream(exe, "validation_labels", ir::StreamDirection::HostToDevice,
                                         exe.streams[c.labelsStream].dtype, labelElements, feeds ? w.training.prefetchDepth : 1);
    c.validationLossStream = addStream(exe, "validation_loss", ir::StreamDirection::DeviceToHost, ir::DType::Float,
                                       validationLossElements, feeds ? w.training.outfeedBufferDepth : 1);
    c.validationStepsPerRun = std::uint32_t(w.training.validationStepsPerRun());
  }

  ir::Id updatesParent = ir::kNoId;  // the Sequence holding the update ops
  ir::Id entry = ir::kNoId;
  if (pipelined) {
    progress("pipelining");
    PipelineParts parts = pipelineParts(w, graph, schedule, allOpSequences, step, target.tile.tilesPerIpu, shards, false);
    if (fit) {
      const GradientAccumulation accumulated = accumulateGradients(exe, updateSequences, replicaTarget.tile.workerContexts);
      parts.accumulate = accumulated.accumulate;
      parts.zero = accumulated.zero;
    }
    parts.sideBySide = w.pipeline.schedule != "sequential";
    parts.imagesStream = c.imagesStream;
    parts.labelsStream = c.labelsStream;
    parts.lossStream = c.lossStream;
    parts.outfeedEachMiniBatch = !lossLast;
    parts.outfeedName = outfeedName;
    // The validation pipeline: the schedule's forward passes alone on the validation pass's ops.
    PipelineParts checks;
    if (validation) {
      checks = pipelineParts(w, graph, schedule, allOpSequences, step, target.tile.tilesPerIpu, shards, true);
      checks.sideBySide = parts.sideBySide;
      checks.imagesStream = c.validationImagesStream;
      checks.labelsStream = c.validationLabelsStream;
      checks.lossStream = c.validationLossStream;
      checks.outfeedEachMiniBatch = !lossLast;
      checks.outfeedName = "validation_loss";
    }
    // Both pipelines' mini-batches lay out their own tensors and programs.
    PipelineCopyItems items = pipelineItemsPerMiniBatch(exe, parts);
    if (validation) {
      const PipelineCopyItems more = pipelineItemsPerMiniBatch(exe, checks);
      items.tensorIntervals += more.tensorIntervals, items.tensorRenames += more.tensorRenames;
      items.tensors += more.tensors, items.programs += more.programs, items.renamedWork += more.renamedWork;
    }
    const std::string key = "workload '" + w.name + "': pipeline.gradient_accumulation_count";
    checkPipelineCopies(key, accumulation, items.tensorIntervals, items.tensorRenames, items.tensors, items.programs);
    if (w.functional) checkFunctionalPipeline(key, accumulation, items.renamedWork, replicas);
    const PipelinePlan plan = planPipeline(w.pipeline.schedule, w.pipeline.stages, accumulation);
    const PipelinedProgram pipeline = buildPipeline(exe, fit ? plan : forwardOnly(plan), parts);
    // The N mini-batches, then the update on their summed gradients (evaluate, predict: none).
    ir::Id body = pipeline.program;
    if (fit) {
      updatesParent = pipeline.apply;
      ir::Program both;
      both.kind = ir::ProgramKind::Sequence;
      both.name = "pipeline_and_update";
      both.children = {pipeline.program, updatesParent};
      both.debug = {"training", "pipeline"};
      body = exe.addProgram(both);
    }
    entry = addTrainingLoop(exe, w, body, accumulation,
                            lossLast ? exe.addProgram(streamCopy(outfeedName, c.lossStream, pipeline.lastLoss, lossElements,
                                                                 outfeedName))
                                     : ir::kNoId);
    exe.entryPoints.push_back({entryPointOf(w.task), entry});
    std::vector<ir::Id> roots{entry};
    if (validation) {
      const PipelinedProgram validating = buildPipeline(exe, forwardOnly(plan), checks);
      addValidationEntryPoint(exe, c, validating.program, c.validationStepsPerRun / accumulation, lossLast,
                              validating.lastLoss);
      roots.push_back(exe.entryPoints.back().program);
    }
    step.useSpans = useSpansInOrder(exe, roots);
  } else {
    std::vector<ir::Id> stepChildren{
        exe.addProgram(streamCopy("images", c.imagesStream, step.images, batch * w.dataset.features, "input"))};
    if (!predict) stepChildren.push_back(exe.addProgram(streamCopy("labels", c.labelsStream, step.labels, labelElements, "input")));
    GradientAccumulation accumulated;
    if (accumulation > 1) {
      // The mini-batch step stops before the updates and adds its gradients up.
      accumulated = accumulateGradients(exe, updateSequences, replicaTarget.tile.workerContexts);
      for (ir::Id seq : step.opSequences)
        if (std::find(updateSequences.begin(), updateSequences.end(), seq) == updateSequences.end())
          stepChildren.push_back(seq);
      stepChildren.push_back(accumulated.accumulate);
      for (ir::Id acc : accumulated.accumulators) {
        step.useSpans.resize(acc + 1, {0, 0});
        step.useSpans[acc] = {0, step.lastStep + 1};
      }
    } else {
      stepChildren.insert(stepChildren.end(), step.opSequences.begin(), step.opSequences.end());
    }
    if (!lossLast)
      stepChildren.push_back(exe.addProgram(streamCopy(outfeedName, c.lossStream, step.loss, lossElements, outfeedName)));
    // The inputs are written at step 0, the loss read after the last op.
    for (ir::Id t : {step.images, step.labels})
      if (t != ir::kNoId) step.useSpans[t].first = 0;
    step.useSpans[step.loss].second = step.lastStep + 1;

    ir::Program seq;
    seq.kind = ir::ProgramKind::Sequence;
    seq.name = "step";
    seq.children = stepChildren;
    seq.marksStep = true;
    seq.debug = {"training", "step"};  // (the step structure, whatever the task: report --ops counts it as "step")
    entry = exe.addProgram(seq);
    updatesParent = entry;
    if (accumulation > 1) {
      ir::Program miniBatches;
      miniBatches.kind = ir::ProgramKind::Repeat;
      miniBatches.name = "gradient_accumulation_count";
      miniBatches.count = accumulation;
      miniBatches.children = {entry};
      miniBatches.debug = {"training", "gradient_accumulation"};
      updatesParent = addApplyGradients(exe, updateSequences, accumulated.zero);
      ir::Program both;
      both.kind = ir::ProgramKind::Sequence;
      both.name = "accumulate_and_update";
      both.children = {exe.addProgram(miniBatches), updatesParent};
      both.debug = miniBatches.debug;
      entry = exe.addProgram(both);
    }
    entry = addTrainingLoop(
        exe, w, entry, accumulation,
        lossLast ? exe.addProgram(streamCopy(outfeedName, c.lossStream, step.loss, lossElements, outfeedName)) : ir::kNoId);
    exe.entryPoints.push_back({entryPointOf(w.task), entry});
  }
  if (validation && !pipelined)
    addValidationEntry(exe, c, step, validationSequences, batch * w.dataset.features, labelElements, lossLast);

  progress("planning memory");
  // The code each tile holds (vertex code and state, control and exchange
  // code): always-live tensors, so that every memory figure counts them.
  if (w.codeMemory) {
    const std::vector<ir::CodeBytes> code = ir::codeBytesPerTile(exe, tiles, target.tile);
    for (const ir::CodeBytes& b : code) c.report.codeBytes += b;
    for (ir::Id id : ir::addCodeMemoryTensors(exe, code)) step.useSpans.resize(id + 1, {0, 0});
  }
  // (Only for a step over memory: choosing "auto"'s checkpoints builds training graphs.)
  const auto remedy = [&](const WorstTile& worst) {
    std::string ways = peakRemedies(w, exe, worst, target.tile.memoryBytes);
    for (const std::string& more : {recomputationRemedy(w), optimizerStateRemedies(w, replicaTarget, memoryEstimate)})
      if (!more.empty()) ways += (ways.empty() ? "" : ", ") + more;
    return ways;
  };
  const auto checkingMemory = [&](auto&& plan) {
    try {
      return plan();
    } catch (const std::invalid_argument& e) {
      // The trial compiles the workload again: this step's executable goes
      // first, so that the two are never in memory together.
      const std::string summary = e.what();
      exe = ir::Executable();
      progress("trying recomputation");
      throw std::invalid_argument(summary + recomputationTrial(original, target, step.estimatedStepCycles));
    }
  };
  MemoryPlanResult mem = checkingMemory(
      [&] { return planMemory(exe, step.useSpans, tiles, target.tile.memoryBytes, w.allowOutOfMemory, remedy); });
  if (replicas > 1) {
    progress("replicating");
    // As replicate() decides it (an odd tile count is laid out in full).
    const bool mirror = w.mirrorReplicas && tiles % 2 == 0;
    if (!mirror)  // every replica laid out in full
      checkLayoutVertices("workload '" + w.name + "': ipu.num_ipus", replicas, "replicas", vertexCount(exe),
                          " replicas, or --synthetic-data (timing only: identical replicas are laid out once)");
    // The update ops' programs are the ones apply_gradients runs, pipelined
    // or not (side by side, they are the children of one Sequence running
    // its IPUs apart). Timing-only, pipelined replicas are mirrored as plain
    // ones are (tests/e2e/test_replica_mirror_profile.cpp: the same profile
    // as the full layout).
    const ReplicatedUpdates collectives =
        replicate(exe, replicas, shards, tiles, updateSequences, target.tile.workerContexts, mirror, step.shardOfVertex,
                  pods);
    auto& children = exe.programs[updatesParent].children;
    // Pipelined, the updates are the first children of apply_gradients: the all-reduce goes first.
    // (Evaluate and predict have no update, and nothing to reduce.)
    if (fit) {
      auto firstUpdate = pipelined ? children.begin() : std::find(children.begin(), children.end(), updateSequences.front());
      firstUpdate = children.insert(firstUpdate, collectives.before);
      if (collectives.after != ir::kNoId) {
        auto lastUpdate = std::find(firstUpdate, children.end(), updateSequences.back());
        if (lastUpdate == children.end()) throw std::logic_error("compile: the last update is not in the step");
        children.insert(lastUpdate + 1, collectives.after);
      }
    }
    // The collectives' buffers (each gradient's received copy) come after the
    // plan: the fullest tile and the out-of-memory check left them out, and a
    // step a tile over capacity ran (the tutorial's 4 replicas: 7,416 bytes,
    // where the profile shows 8,024). Placed as the load places them, and
    // counted as the profile counts them.
    mem = checkingMemory([&] {
      return placeAfterPlan(exe, target.totalTiles(), tiles, target.tile.memoryBytes, w.allowOutOfMemory, remedy);
    });
  }
  progress("validating");
  exe.validate(target.totalTiles());
  checkStreamingMemoryFits(exe, target);

  c.imagesTensor = step.images;
  c.labelsTensor = step.labels;
  c.lossTensor = step.loss;
  c.weightTensors = step.weightTensors;
  c.report.schedule = schedule.algorithm;
  c.report.estimatedModelBytes = modelBytes(memoryEstimate.totalBytes);
  c.report.estimatedModelBytesPerTile = modelBytes(memoryEstimate.bytesPerTile());
  c.report.peakLivenessBytes = schedule.peakLivenessBytes;
  c.report.tilesUsed = mem.tilesUsed;
  c.report.maxTileBytes = mem.maxTileBytes;
  c.report.meanTileBytes = mem.meanTileBytes;
  c.report.estimatedStepCycles = step.estimatedStepCycles;
  c.report.estimatedValidationStepCycles = step.estimatedValidationStepCycles;
  // Over every replica's tiles, as the profile counts them (`report`: the
  // replicas' layouts are one plan's copies); the plan's figures are one
  // replica's. (Two replicas each a tile over said "1 tile OVER capacity"
  // where the profile's report said 2.)
  c.report.tilesOverCapacity = mem.tilesOverCapacity * replicas;
  c.report.matMulPlans = step.matMulPlans;
  c.report.convPlans = step.convPlans;
  c.report.warnings = graph.warnings;
  for (std::size_t v : graph.modelWeights) c.report.weightElements += graph.values[v].numElements();
  for (std::size_t v : graph.weights) c.report.trainableWeightElements += graph.values[v].numElements();
  std::vector<std::string> recomputedLayers;
  for (const Op& op : graph.ops)
    if (op.recomputed) recomputedLayers.push_back(op.layer);
  c.report.recomputation = recomputationSummary(w, recomputedLayers);
  // A checkpoint left out of what is recomputed, while others recompute, is
  // said too (none recomputing, or one cutting nothing: the graph's warnings
  // say so already).
  if (c.report.recomputation.ops) {
    const RecomputeSegments segments = recomputeSegments(w);
    const std::vector<std::string>& kept = c.report.recomputation.checkpoints;
    for (const std::string& checkpoint : w.training.recomputeCheckpoints)
      if (std::find(kept.begin(), kept.end(), checkpoint) == kept.end() &&
          std::none_of(segments.cuttingNothing.begin(), segments.cuttingNothing.end(),
                       [&](const RecomputeSegments::Uncut& u) { return u.layer == checkpoint; }))
        c.report.warnings.push_back("the recomputation checkpoint at layer '" + checkpoint +
                                    "' recomputes nothing: every activation its segment's backward pass reads is "
                                    "kept (training.recompute_checkpoints)");
  }
  c.report.computeSets = exe.computeSets.size();
  // (A Copy renaming another's tensors runs that exchange: counted once.)
  for (const auto& p : exe.programs) c.report.exchanges += p.kind == ir::ProgramKind::Copy && p.copyOf == ir::kNoId;
  c.exe = std::move(exe);
  return c;
}

}  // namespace ipusim::scheduler
