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
  const long double weightBytes = w.dtype == "float16" ? 2 : 4;  // the variables' type
  const long double bytes = weightBytes * (weights + largestGradient) + 4 * streams;
  const long double perTile = bytes / tiles;
  if (perTile <= target.tile.memoryBytes) return;
  auto text = [](long double v) { return std::to_string((unsigned long long)(v + 0.5L)); };
  throw std::invalid_argument(
      "out of memory: the model cannot fit " + std::to_string(tiles) + " tiles of " +
      std::to_string(target.tile.memoryBytes) + " bytes: its weights (" + text(weightBytes * weights) +
      " bytes), the largest weight gradient (" + text(weightBytes * largestGradient) + " bytes) and the stream buffers (" +
      text(4 * streams) + " bytes) need " + text(perTile) + " bytes per tile even spread evenly over every tile, " +
      text(perTile - target.tile.memoryBytes) + " over capacity (decided from the layer shapes, before compiling; "
      "use a smaller model, more IPUs or compile.allow_out_of_memory)");
}

}  // namespace ipusim::scheduler
