#pragma once
// One Keras layer's config -> a LayerSpec: the keys every layer has, then
// its class's own (the layer registry's Layer::readKeras); keras_model.hpp
// reads the document around it. Internal to scheduler/.
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/layer_spec.hpp"

#include <optional>
#include <string>

namespace ipusim::scheduler {

struct KerasLayer {
  LayerSpec spec;
  std::string dtype;  // the layer's dtype policy
};

// `c` is the layer's config, `className` its Keras class (one of
// kerasLayerClasses(), InputLayer excepted). Throws naming file, layer, key.
KerasLayer readKerasLayer(KerasConfig& c, const std::string& className);

}  // namespace ipusim::scheduler
