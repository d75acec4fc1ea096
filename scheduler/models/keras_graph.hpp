#pragma once
// The layer calls of a Keras model document, flattened into one list: the
// graph keras_model.cpp reads layer by layer. It resolves what a functional
// config says about its graph:
//   - inbound_nodes in both formats (TF 2.x nested lists, with kwargs; Keras
//     3's {"args": [{"class_name": "__keras_tensor__", ...}], "kwargs"}),
//     the tensors passed as query, value or key by keyword being operands;
//   - a layer called more than once (a shared layer): one call per inbound
//     node, call k > 0 named "<layer>@<k>" and sharing the layer's weights;
//     a reference [layer, k, 0] reads call k;
//   - nested Sequential / Functional / Model layers: their layers inlined,
//     the nested model's input replaced by what the call reads and its
//     output standing for the call (a nested model called again inlines
//     again, its layers sharing the first inlining's weights); inner names
//     are kept, so they must not clash with the outer model's (an error
//     names both);
//   - TF op nodes, TF 2.x's TensorFlowOpLayer (node_def.op, constants) and
//     TFOpLambda (config.function, kwargs), and Keras 3's operation nodes
//     ("module": "keras.src.ops.numpy"), that are elementwise merges of two
//     tensors (add, subtract, multiply) become those merge layers; with a
//     constant operand (x * 0.5, x + 1, x / 255, -x) a Rescaling; any other
//     op is refused by name.
// Errors are std::invalid_argument "<file>: <where>: <what>".
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct KerasCall {
  std::string cls;        // the Keras layer class it is read as
  std::string name;       // the call's name, unique in the model
  std::string weightsOf;  // another call's layer whose weights it shares, or ""
  const nlohmann::json* config = nullptr;  // the layer's config (for a TF op: a config made for it)
  std::vector<std::string> inputs;         // the calls it reads (an input layer's name: the model's input)
  std::string where;                       // "layer 'x' (Class)", for errors
  // The call's keyword arguments that are not tensors ({"use_causal_mask":
  // true, "training": false}); tensors by keyword are refused, but an
  // attention layer's query, value and key, which are its inputs.
  nlohmann::json keywords = nlohmann::json::object();
  // In a nested model whose config says `trainable: false` (Keras's
  // base_model.trainable = False): the layer is frozen whatever its own config says.
  bool frozenByModel = false;
};

struct KerasGraph {
  // The top model's input layers (InputLayer objects), in config order.
  std::vector<const nlohmann::json*> inputLayers;
  std::vector<KerasCall> calls;  // every layer call but the inputs, in config order
  std::vector<std::string> outputs;  // the calls the model outputs (config.output_layers)
  std::vector<std::unique_ptr<nlohmann::json>> madeConfigs;  // the configs made for TF op nodes
};

// `model` is a Sequential or functional model object ({"class_name", "config"}).
KerasGraph flattenKerasModel(const nlohmann::json& model, const std::string& file);

// Whether class `cls` of `object` is a model nested as a layer.
bool isKerasModelClass(const std::string& cls);

}  // namespace ipusim::scheduler
