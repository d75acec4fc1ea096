#include "scheduler/models/memory_estimate.hpp"

#include "model/hardware/transfer_cycles.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/layers/layer.hpp"
#include "scheduler/models/auto_checkpoints.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace ipusim::scheduler {

ModelMemoryEstimate estimateModelMemory(const Workload& w, std::uint32_t tiles) {
  ModelMemoryEstimate estimate;
  estimate.tiles = tiles;
  std::vector<ModelMemoryEstimate::Variable>& variables = estimate.variables;
  const long double weightBytes = w.dtype == "float16" ? 2 : 4;  // the variables' type
  const long double computeBytes = w.dtype == "float32" ? 4 : 2;  // the activations' type
  // Per layer call (scheduler/layers/layer.hpp Layer::footprint): the
  // activations the backward pass keeps, all live when the loss is computed
  // (each a different tensor; the model's input is the images, counted
  // below), and each layer's weights once, with the optimizer's slot
  // variables, which live as long as their weights.
  // Outside fit (evaluate, predict) no activation is kept for a backward
  // pass, and there is no gradient and no optimizer state.
  const bool fit = w.task == Task::Fit;
  const OptimizerSpec& o = w.optimizer;
  const int slots = fit ? o.slots() : 0;
  long double largestKernel = 0;
  std::string largestKernelName;
  // With recomputation (recomputeSegments: checkpoints, a pipeline's
  // stages), the activations of a segment before the last are kept only
  // while its own backward pass runs: of those segments, only the largest
  // is counted.
  const long double stateShards =
      w.training.replicatedOptimizerStateSharding ? (long double)replicasOf(w) : 1.0L;
  const RecomputeSegments segments = recomputeSegments(w);
  const std::size_t lastSegment = segments.last;
  const std::vector<std::size_t>& segmentOf = segments.ofLayer;
  std::vector<long double> segmentBytes(lastSegment + 1, 0);
  // Whether a layer's output depends on a trainable weight: a layer keeps
  // activations for a backward pass only when it has trainable weights or
  // an input that does (a frozen base model before a trained head keeps none).
  std::vector<bool> trained(w.layers.size(), false);
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const LayerSpec& l = w.layers[i];
    bool t = l.trainable && layerOfKind(l.kind).hasWeights(l);
    if (l.inputs.empty() && i > 0) t = t || trained[i - 1];  // a chain reads the layer before
    for (std::size_t in : l.inputs) t = t || (!isModelInput(in) && trained[in]);
    trained[i] = t;
  }
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const LayerSpec& l = w.layers[i];
    const Layer::Footprint f = layerOfKind(l.kind).footprint(l);
    const bool readsImages = (l.inputs.empty() && i == 0) || (l.inputs.size() == 1 && isModelInput(l.inputs[0]));
    if (fit && f.keptElements && !(readsImages && f.kept == "input") && trained[i]) {
      const long double bytes = computeBytes * w.dataset.batchSize * f.keptElements;
      if (segmentOf[i] < lastSegment) segmentBytes[segmentOf[i]] += bytes;
      else variables.push_back({l.name + "/" + f.kept, "activations", bytes});
    }
    if (!l.weightsOf.empty()) continue;  // a shared layer's later call: its weights are counted once
    if (f.stateElements) variables.push_back({l.name + "/state", "weights", 4.0L * f.stateElements});
    for (const auto& [name, elements] : f.weights) {
      const long double bytes = elements * weightBytes;
      variables.push_back({l.name + "/" + name, "weights", bytes});
      if (!l.trainable) continue;  // frozen: no slots, no gradient
      for (int s = 0; s < slots; ++s) estimate.slotBytes.push_back(bytes);
      // Offloaded, a weight's slots are on the tiles only during its update
      // (counted below); sharded over R replicas, each keeps 1/R of them.
      if (slots && !w.training.offloadOptimizerState)
        variables.push_back({l.name + "/" + name + "_slots", "optimizer", slots * bytes / stateShards});
      if (bytes > largestKernel) largestKernel = bytes, largestKernelName = l.name + "/" + name;
    }
  }
  if (const auto largest = std::max_element(segmentBytes.begin(), segmentBytes.end()); *largest > 0)
    variables.push_back({"the largest recomputed segment", "activations", *largest});
  // The loss's backward keeps its input, each model output (the softmax's
  // probabilities, the prediction mean squared error compares), live with
  // the layers' kept activations when the backward pass starts: as wide as
  // the last layer makes it (an attention's output_shape or a Dense's units
  // of 1.2e8 at batch 1 are 480 MB).
  for (std::size_t o : modelOutputs(w)) {
    long double elements = 1;
    for (std::uint64_t d : w.layers[o].outputShape) elements *= d;
    variables.push_back({w.layers[o].name + "/output", "activations", computeBytes * w.dataset.batchSize * elements});
  }
  // One weight gradient is live at its update at least (the largest), with
  // its slots when they are loaded from Streaming Memory for it.
  if (fit) variables.push_back({largestKernelName + "_grad", "gradients", largestKernel});
  if (slots && w.training.offloadOptimizerState)
    variables.push_back({largestKernelName + "_slots (loaded for its update)", "optimizer", slots * largestKernel});
  variables.push_back({"images", "stream_buffers", 4.0L * w.dataset.batchSize * w.dataset.features});
  // Class indices (int) or targets (float): 4 bytes each (LossSpec::targetWidth).
  const long double labelWidth = w.loss.classIndexLabels() ? 1.0L : (long double)w.loss.targetWidth(w.dataset.classes);
  if (w.task != Task::Predict) variables.push_back({"labels", "stream_buffers", 4.0L * w.dataset.batchSize * labelWidth});
  for (const auto& v : variables) estimate.totalBytes += v.bytes;
  std::stable_sort(variables.begin(), variables.end(),
                   [](const ModelMemoryEstimate::Variable& a, const ModelMemoryEstimate::Variable& b) {
                     return a.bytes > b.bytes;
                   });
  return estimate;
}

void checkModelFits(const Workload& w, const model::Target& target, const ModelMemoryEstimate& estimate) {
  if (w.allowOutOfMemory) return;
  const long double total = estimate.totalBytes, perTile = estimate.bytesPerTile();
  const std::uint32_t tiles = estimate.tiles;
  const auto& variables = estimate.variables;
  if (perTile <= target.tile.memoryBytes) return;
  auto text = [](long double v) { return std::to_string((unsigned long long)(v + 0.5L)); };
  // What the sum counts (estimateModelMemory): outside fit no gradient and
  // no backward pass, only the model's outputs beside the weights.
  const std::string counted = w.task == Task::Fit
                                  ? "its weights, largest weight gradient, stream buffers and the activations the "
                                    "backward pass keeps"
                                  : "its weights, stream buffers and outputs";
  const std::string noBackward = w.task == Task::Fit ? "" : std::string("; no backward pass in ") + taskName(w.task);
  std::string message =
      "out of memory: the model cannot fit " + std::to_string(tiles) + " tiles of " +
      std::to_string(target.tile.memoryBytes) + " bytes: even spread evenly over every tile, " + counted + " (" +
      text(total) + " bytes" + noBackward + ") need " + text(perTile) + " bytes per tile; all " +
      std::to_string(tiles) + " tiles are over their capacity, by " + text((perTile - target.tile.memoryBytes) * tiles) +
      " bytes in total (decided from the layer shapes, before compiling). Largest variables, per tile:";
  for (std::size_t i = 0; i < std::min<std::size_t>(5, variables.size()); ++i)
    message += std::string(i ? "," : "") + " " + variables[i].name + " (" + variables[i].category + ") " +
               text(variables[i].bytes / tiles) + " bytes";
  std::string remedy = recomputationRemedy(w);
  if (!remedy.empty()) {
    // What recomputation would make of this bound (auto_checkpoints.hpp).
    // (A pipeline's stage recomputed whole still holds one mini-batch's
    // activations, all this bound counts: it may not fall.)
    const Workload recomputing = withAutoRecomputation(w);
    const long double after = estimateModelMemory(recomputing, tiles).bytesPerTile();
    if (recomputes(recomputing) && after < perTile)
      remedy += std::string(": with ") + (w.pipeline.enabled() ? "\"Auto\"" : "\"auto\"") +
                " this estimate falls to " + text(after) + " bytes per tile";
  }
  if (const std::string more = optimizerStateRemedies(w, target, estimate); !more.empty())
    remedy += (remedy.empty() ? "" : ", ") + more;
  message += ". Use a smaller model or more IPUs, " + (remedy.empty() ? "" : remedy + ", ") +
             "or set compile.allow_out_of_memory to compile anyway.";
  throw std::invalid_argument(message);
}

std::string offloadRemedy(const Workload& w, const model::Target& target, const ModelMemoryEstimate& estimate) {
  if (w.task != Task::Fit || w.training.offloadOptimizerState || estimate.slotBytes.empty() ||
      target.streamingMemory.bytesPerIpu <= 0 || replicasOf(w) > 1)
    return "";
  long double total = 0, largest = 0, cycles = 0;
  for (long double bytes : estimate.slotBytes) {
    total += bytes;
    largest = std::max(largest, bytes);
    // Loaded before the update and stored after it: two copies, each ended by a sync.
    // (A transfer past the simulator's 2^53 cycles is counted as that many.)
    ir::Cycles one = 1ull << 53;
    if (bytes < 1e15L) one = model::hardware::remoteTransferCycles(target, std::uint64_t(bytes));
    cycles += 2.0L * (one + target.sync.externalCycles);
  }
  // Not where the state cannot fit the target's Streaming Memory (--set
  // streamingMemory.bytesPerIpu=100 was offered it, which the compile then
  // refused): even spread over every IPU of the replica.
  if (total > (long double)target.streamingMemory.bytesPerIpu * target.numIpus()) return "";
  // The slots of one weight stay, during its update.
  const std::size_t perWeight = std::size_t(w.optimizer.slots());
  const long double saved = (total - perWeight * largest) / (estimate.tiles ? estimate.tiles : 1);
  return "keep the optimizer state in Streaming Memory between its updates (training.offload_optimizer_state: "
         "true; about " + std::to_string((unsigned long long)(saved + 0.5L)) + " bytes less per tile, about " +
         std::to_string((unsigned long long)(cycles + 0.5L)) + " more cycles per step)";
}

std::string shardingRemedy(const Workload& w, const ModelMemoryEstimate& estimate) {
  const std::uint32_t replicas = replicasOf(w);
  if (w.task != Task::Fit || replicas < 2 || w.training.replicatedOptimizerStateSharding || estimate.slotBytes.empty())
    return "";
  long double total = 0;
  for (long double bytes : estimate.slotBytes) total += bytes;
  const long double saved = total * (replicas - 1) / replicas / (estimate.tiles ? estimate.tiles : 1);
  return "shard the optimizer state over the " + std::to_string(replicas) +
         " replicas (training.replicated_optimizer_state_sharding: true; about " +
         std::to_string((unsigned long long)(saved + 0.5L)) +
         " bytes less per tile; the all-gather carries the updated weights instead of the gradients, as many bytes "
         "when they share a type, and each replica runs 1/" + std::to_string(replicas) + " of the updates)";
}

std::string optimizerStateRemedies(const Workload& w, const model::Target& target, const ModelMemoryEstimate& estimate) {
  std::string all;
  for (const std::string& one : {offloadRemedy(w, target, estimate), shardingRemedy(w, estimate)})
    if (!one.empty()) all += (all.empty() ? "" : ", ") + one;
  return all;
}

std::string recomputationRemedy(const Workload& w) {
  if (w.task != Task::Fit || recomputes(w)) return "";
  if (w.pipeline.enabled()) {
    // Only where "Auto" recomputes an op: a pipeline whose stages before the
    // last keep nothing but their inputs (a frozen first stage, one of a
    // single dense layer) was offered it, and the trial that followed said
    // it would not help this step (compiler.cpp's recomputationTrial).
    try {
      Workload recomputing = withAutoRecomputation(w);
      const OpGraph graph = buildTrainingGraph(recomputing);
      if (std::none_of(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.recomputed; })) return "";
    } catch (const std::exception&) {
      // (A graph the compile refuses, with its own message: offered as before.)
    }
    return "recompute each stage's activations in its backward pass instead of keeping them for every mini-batch in "
           "flight (pipeline.recomputation_mode: \"Auto\", TF's RecomputationMode)";
  }
  // "auto" offered only where it finds checkpoints: a model without two
  // layers to cut at was told to try "auto", which then refused it ("the
  // model has no layer to checkpoint").
  const bool automatic = !autoRecomputeCheckpoints(w).empty();
  return "recompute activations for the backward pass instead of keeping them (training.recompute_checkpoints: "
         "the layers whose outputs are kept" + std::string(automatic ? ", or \"auto\")" : "; \"auto\" finds no layer to cut this model at)");
}

}  // namespace ipusim::scheduler
