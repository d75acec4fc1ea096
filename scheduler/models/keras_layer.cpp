#include "scheduler/models/keras_layer.hpp"

#include "scheduler/layers/layer.hpp"


namespace ipusim::scheduler {

KerasLayer readKerasLayer(KerasConfig& c, const std::string& cls) {
  const Layer* layer = layerOfKerasClass(cls);
  if (!layer) c.fail("class_name", "internal: no reader for " + cls);
  KerasLayer out;
  // Keys every Keras layer may carry that do not change the training step:
  // its name, and the input_shape / batch_input_shape kwargs of a first layer
  // (read by the document reader when it needs them), and Keras 1's
  // input_dtype (the images are fed as floats whatever it says).
  c.ignore({"name", "batch_input_shape", "batch_shape", "input_shape", "input_dim", "input_dtype"});
  out.spec.name = c.isNull("name") ? "" : c.string("name", "");  // None: Keras names it (the call's name then)
  const bool trainable = c.boolean("trainable", true);  // false: frozen (LayerSpec::trainable)
  out.dtype = c.dtypePolicy("dtype");
  layer->readKeras(c, cls, out.spec);
  if (!trainable) out.spec.freeze();  // (after a wrapper read the layers it wraps)
  c.check();
  // The initializers that are not the layer's default, by the weight they draw.
  for (const auto& [key, spec] : c.initializers()) {
    std::string weight = key.substr(0, key.size() - std::string("_initializer").size());
    if (weight == "depthwise") weight = cls.rfind("Separable", 0) == 0 ? "depthwise_kernel" : "kernel";
    if (weight == "pointwise") weight = "pointwise_kernel";
    if (weight == "recurrent") weight = "recurrent_kernel";
    out.spec.initializers[weight] = spec;
  }
  // The regularizers, by the weight they penalize (or "activity").
  for (const auto& [key, spec] : c.regularizers()) out.spec.regularizers[regularizedWeight(key, out.spec.kind)] = spec;
  return out;
}

}  // namespace ipusim::scheduler
