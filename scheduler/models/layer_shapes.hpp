#pragma once
// Shape inference over a layer list: each layer's per-example input and
// output shape (channels last), from the model's input shape. A layer whose
// input does not fit it (a conv2d on a flat vector, a reshape that changes
// the element count, a valid convolution larger than its input) throws
// std::invalid_argument "<source>: <where(layer, key)>: <what>", so the
// message names the file, the layer and the key, whichever format the layer
// came from.
#include "scheduler/models/layer_spec.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

// Names a layer's key in an error: "model.layers[2].kernel_size" (workload)
// or "layer 'conv2d_1' (Conv2D): kernel_size" (Keras file).
using LayerKeyNamer = std::function<std::string(std::size_t layer, const std::string& key)>;

void inferLayerShapes(std::vector<LayerSpec>& layers, const std::vector<std::uint64_t>& inputShape,
                      const std::string& source, const LayerKeyNamer& where);
// A model with several inputs: modelInput(k) has inputShapes[k].
void inferLayerShapes(std::vector<LayerSpec>& layers, const std::vector<std::vector<std::uint64_t>>& inputShapes,
                      const std::string& source, const LayerKeyNamer& where);

// The output size of one spatial dimension of a convolution or pooling
// window (Keras's rule): valid: floor((in - window) / stride) + 1 (0 when the
// window is larger than the input); same: ceil(in / stride).
std::uint64_t windowedSize(std::uint64_t in, std::uint32_t window, std::uint32_t stride, const std::string& padding);

}  // namespace ipusim::scheduler
