#pragma once
// One Keras layer's config -> a LayerSpec (the Keras importer's per-class
// rules; keras_model.hpp reads the document around it). Internal to scheduler/.
#include "scheduler/keras_config.hpp"
#include "scheduler/layer_spec.hpp"

#include <optional>
#include <string>

namespace ipusim::scheduler {

struct KerasLayer {
  LayerSpec spec;
  std::string dtype;  // the layer's dtype policy
  // A BatchNormalization's axis as written (checked once the input rank is known).
  std::optional<std::int64_t> normalizationAxis;
};

// `c` is the layer's config, `className` its Keras class (one of
// supportedKerasLayers(), InputLayer excepted). Throws naming file, layer, key.
KerasLayer readKerasLayer(KerasConfig& c, const std::string& className);

}  // namespace ipusim::scheduler
