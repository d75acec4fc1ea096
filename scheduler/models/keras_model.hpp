#pragma once
// The Keras importer: a `model.to_json()` file -> ipusim's layer list (and,
// from a Keras 3 compile_config, the optimizer, loss and
// steps_per_execution). Reads both formats found in the wild:
//   - TF 2.x Keras: {"class_name", "config", "keras_version", "backend"},
//     the input shape in an InputLayer's or the first layer's
//     batch_input_shape, dtypes as strings or {"class_name": "Policy"};
//   - Keras 3: every object as {"module", "class_name", "config",
//     "registered_name"} (plus "build_config", "compile_config"), the input
//     shape in "batch_shape", dtypes as DTypePolicy objects.
// Sequential models, and functional Models (class_name "Functional" or
// "Model"): a graph of layer calls from inbound_nodes (models/layer_graph.hpp),
// with any number of inputs (their examples streamed as one tuple) and
// outputs (one loss each). Config keys that do not change the computation (initializers
// we replace by our own Glorot draw, names, trainable, data_format
// channels_last, ...) are ignored; a key that would change it and is not
// modelled (a regularizer, a constraint, dilation_rate != 1, an unknown
// activation) is an error naming the file, the layer, the key and the
// value; an unsupported layer class names its class, its name and the
// supported classes. Shapes are inferred and checked (layer_shapes.hpp).
#include "scheduler/models/layer_spec.hpp"
#include "scheduler/models/workload.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct KerasModel {
  std::string format;        // "tf2" or "keras3"
  std::string kerasVersion;  // TF 2.x files name it ("2.4.0"); Keras 3 files do not
  std::string name;          // the model's name
  // Per example (the batch dimension dropped); a size the file leaves unknown
  // is 0, and the layers' shapes are then inferred once the workload gives it.
  // With several inputs: the elements of all of them ({sum}), as streamed.
  std::vector<std::uint64_t> inputShape;
  std::vector<ModelInput> inputs;     // the InputLayers in config.input_layers' order
  std::vector<std::size_t> outputs;  // the output layers (indices into `layers`) in config.output_layers' order
  std::uint32_t batchSize = 0;            // a fixed batch dimension, else 0
  std::string dtype = "float32";          // the layers' dtype policy (float32 | float16 | mixed_float16)
  std::vector<LayerSpec> layers;          // shapes inferred (unless the input's are unknown)
  std::vector<std::string> where;         // per layer, as errors name it: "layer 'conv2d_1' (Conv2D)"
  std::map<std::string, std::string> classOf;  // each layer's Keras class (in Keras 3's words), by its name
  // From a Keras 3 compile_config, when the model was compiled.
  std::optional<OptimizerSpec> optimizer;
  std::optional<LossSpec> loss;
  std::uint32_t stepsPerExecution = 0;  // 0: not given
  nlohmann::json metrics = nlohmann::json::array();  // as written (KerasCompileConfig::metrics)
};

// The Keras classes read: the layer registry's kerasLayerClasses().

// Errors: std::invalid_argument "<source>: <where>: <what>".
// What a workload gives in place of the file's compile_config: those keys
// of it are not read (a loss the workload replaces need not be modelled).
struct KerasReplaced {
  bool loss = false, optimizer = false;
};
KerasModel parseKerasModel(const nlohmann::json& j, const std::string& source, KerasReplaced replaced = {});
KerasModel loadKerasModel(const std::string& path, KerasReplaced replaced = {});  // also: not a file, not JSON, truncated
// The Keras model object a document holds: itself; the model inside a
// JSON string (json.dump(model.to_json())); a TensorFlow.js model.json's
// modelTopology (or its model_config). Errors name `path`.
nlohmann::json unwrapKerasDocument(nlohmann::json document, const std::string& path);

}  // namespace ipusim::scheduler
