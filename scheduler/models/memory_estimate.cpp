#include "scheduler/models/memory_estimate.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace ipusim::scheduler {

void checkModelFits(const Workload& w, const model::Target& target, std::uint32_t tiles) {
  if (w.allowOutOfMemory) return;
  // Sizes as long double: a hostile layer width must not wrap around.
  struct Variable { std::string name, category; long double bytes; };
  std::vector<Variable> variables;
  const long double weightBytes = w.dtype == "float16" ? 2 : 4;  // the variables' type
  const long double computeBytes = w.dtype == "float32" ? 4 : 2;  // the activations' type
  // Activations the backward pass reads, all live when the loss is computed:
  // the input of every conv2d (its kernel gradient reads it) but the first
  // layer's (the images, counted below), of every max_pooling2d (its
  // gradient finds the maxima in it), and of a dense layer after them (its
  // kernel gradient). Each is a different tensor. (Dense-only models count
  // none, as before.)
  bool spatial = false, computed = false;
  for (const LayerSpec& l : w.layers) {
    namespace k = layer_kind;
    if (l.kind == k::kFlatten || l.kind == k::kReshape) continue;
    // (A batch normalization's backward reads its whitened input, a tensor of its own.)
    const bool reads = (l.kind == k::kConv2D && computed) || l.kind == k::kMaxPooling2D ||
                       l.kind == k::kGlobalMaxPooling2D || (l.kind == k::kDense && spatial) ||
                       l.kind == k::kBatchNormalization;
    if (reads)
      variables.push_back({l.name + (l.kind == k::kBatchNormalization ? "/whitened" : "/input"), "activations",
                           computeBytes * w.dataset.batchSize * (long double)elementsOf(l.inputShape)});
    spatial = spatial || l.kind == k::kConv2D || l.kind == k::kMaxPooling2D || l.kind == k::kAveragePooling2D ||
              l.kind == k::kGlobalAveragePooling2D || l.kind == k::kGlobalMaxPooling2D;
    computed = true;
  }
  long double features = w.dataset.features, largestKernel = 0;
  std::string largestKernelName;
  const OptimizerSpec& o = w.optimizer;
  const int slots = o.type == "adam" ? 2 : o.type == "rmsprop" ? 1 + o.centered + (o.momentum > 0) : (o.momentum > 0);
  for (const LayerSpec& l : w.layers) {
    if (l.kind == layer_kind::kBatchNormalization) {  // gamma, beta, the moving mean and variance (float), gamma's and beta's slots
      const long double channels = l.outputShape.empty() ? 0 : l.outputShape.back();
      variables.push_back({l.name + "/parameters", "weights", 4 * channels * 4});
      if (slots) variables.push_back({l.name + "/optimizer_slots", "optimizer", slots * 2 * channels * weightBytes});
    }
    if (l.kind != layer_kind::kDense && l.kind != layer_kind::kConv2D) continue;
    if (!l.inputShape.empty()) features = l.inputShape.back();
    // dense: fan-in x units; conv2d: kernel rows x columns x input channels x filters
    const long double fanIn = l.kind == layer_kind::kConv2D ? features * l.window[0] * l.window[1] : features;
    const long double kernel = fanIn * l.units * weightBytes;
    variables.push_back({l.name + "/kernel", "weights", kernel});
    variables.push_back({l.name + "/bias", "weights", l.units * weightBytes});
    // The optimizer's slot variables live as long as their weights.
    if (slots) variables.push_back({l.name + "/optimizer_slots", "optimizer", slots * (kernel + l.units * weightBytes)});
    if (kernel > largestKernel) largestKernel = kernel, largestKernelName = l.name;
    features = l.units;
  }
  // One weight gradient is live at its update at least (the largest).
  variables.push_back({largestKernelName + "/kernel_grad", "gradients", largestKernel});
  variables.push_back({"images", "stream_buffers", 4.0L * w.dataset.batchSize * w.dataset.features});
  variables.push_back({"labels", "stream_buffers", 4.0L * w.dataset.batchSize});
  long double total = 0;
  for (const Variable& v : variables) total += v.bytes;
  const long double perTile = total / tiles;
  if (perTile <= target.tile.memoryBytes) return;
  auto text = [](long double v) { return std::to_string((unsigned long long)(v + 0.5L)); };
  std::sort(variables.begin(), variables.end(), [](const Variable& a, const Variable& b) { return a.bytes > b.bytes; });
  std::string message =
      "out of memory: the model cannot fit " + std::to_string(tiles) + " tiles of " +
      std::to_string(target.tile.memoryBytes) + " bytes: even spread evenly over every tile, its weights, largest "
      "weight gradient, stream buffers and the conv layers' activations (" + text(total) + " bytes) need " + text(perTile) + " bytes per tile; all " +
      std::to_string(tiles) + " tiles are over their capacity, by " + text((perTile - target.tile.memoryBytes) * tiles) +
      " bytes in total (decided from the layer shapes, before compiling). Largest variables, per tile:";
  for (std::size_t i = 0; i < std::min<std::size_t>(5, variables.size()); ++i)
    message += std::string(i ? "," : "") + " " + variables[i].name + " (" + variables[i].category + ") " +
               text(variables[i].bytes / tiles) + " bytes";
  message += ". Use a smaller model or more IPUs, or set compile.allow_out_of_memory to compile anyway.";
  throw std::invalid_argument(message);
}

}  // namespace ipusim::scheduler
