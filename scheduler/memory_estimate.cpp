#include "scheduler/memory_estimate.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ipusim::scheduler {

void checkModelFits(const Workload& w, const model::Target& target, std::uint32_t tiles) {
  if (w.allowOutOfMemory) return;
  // Sizes as long double: a hostile layer width must not wrap around.
  long double weights = 0, largestGradient = 0;
  long double features = w.dataset.features;
  for (const LayerSpec& l : w.layers) {
    if (l.kind != "dense") continue;
    const long double kernel = features * l.units;
    weights += kernel + l.units;
    largestGradient = std::max(largestGradient, kernel);
    features = l.units;
  }
  const long double streams = (long double)w.dataset.batchSize * (w.dataset.features + 1);
  const long double bytes = 4 * (weights + largestGradient + streams);
  const long double perTile = bytes / tiles;
  if (perTile <= target.tile.memoryBytes) return;
  auto text = [](long double v) { return std::to_string((unsigned long long)(v + 0.5L)); };
  throw std::invalid_argument(
      "out of memory: the model cannot fit " + std::to_string(tiles) + " tiles of " +
      std::to_string(target.tile.memoryBytes) + " bytes: its weights (" + text(4 * weights) +
      " bytes), the largest weight gradient (" + text(4 * largestGradient) + " bytes) and the stream buffers (" +
      text(4 * streams) + " bytes) need " + text(perTile) + " bytes per tile even spread evenly over every tile, " +
      text(perTile - target.tile.memoryBytes) + " over capacity (decided from the layer shapes, before compiling; "
      "use a smaller model, more IPUs or compile.allow_out_of_memory)");
}

}  // namespace ipusim::scheduler
