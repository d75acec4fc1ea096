#include "scheduler/models/layer_shapes.hpp"

#include "scheduler/layers/layer.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::scheduler {

std::uint64_t windowedSize(std::uint64_t in, std::uint32_t window, std::uint32_t stride, const std::string& padding) {
  if (padding == "same") return (in + stride - 1) / stride;
  if (in < window) return 0;
  return (in - window) / stride + 1;
}

void inferLayerShapes(std::vector<LayerSpec>& layers, const std::vector<std::uint64_t>& inputShape,
                      const std::string& source, const LayerKeyNamer& where) {
  inferLayerShapes(layers, std::vector<std::vector<std::uint64_t>>{inputShape}, source, where);
}

void inferLayerShapes(std::vector<LayerSpec>& layers, const std::vector<std::vector<std::uint64_t>>& inputShapes,
                      const std::string& source, const LayerKeyNamer& where) {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    LayerSpec& l = layers[i];
    auto fail = [&](const std::string& key, const std::string& what) {
      throw std::invalid_argument(source + ": " + where(i, key) + ": " + what);
    };
    if (l.inputs.empty()) l.inputs = {i == 0 ? modelInput(0) : i - 1};  // a chain
    std::vector<std::vector<std::uint64_t>> ins;
    for (std::size_t j : l.inputs) {
      if (isModelInput(j) ? modelInputIndex(j) >= inputShapes.size() : j >= i)
        fail("", "internal: an input that is neither an earlier layer nor one of the model's inputs");
      ins.push_back(isModelInput(j) ? inputShapes[modelInputIndex(j)] : layers[j].outputShape);
    }
    l.inputShape = ins[0];
    l.inputShapes = ins;
    for (const auto& in : ins)
      if (in.empty()) fail("", "the input has no shape");
    if (std::find(layerKinds().begin(), layerKinds().end(), l.kind) == layerKinds().end())
      fail("type", "unknown layer kind '" + l.kind + "'");
    l.outputShape = layerOfKind(l.kind).outputShape(l, ins, fail);
  }
}

}  // namespace ipusim::scheduler
