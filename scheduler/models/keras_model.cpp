#include "scheduler/models/keras_model.hpp"

#include "model/util/input_file.hpp"
#include "model/util/json_nesting.hpp"
#include "model/util/json_error_text.hpp"
#include "scheduler/models/keras_compile.hpp"
#include "scheduler/models/keras_graph.hpp"
#include "scheduler/layers/layer.hpp"
#include "scheduler/models/keras_layer.hpp"
#include "scheduler/models/layer_graph.hpp"
#include "scheduler/models/layer_shapes.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

using json = nlohmann::json;

// An object's "name" if it is a string, else "" (a layer is then named by its index).
std::string nameIn(const json& object) {
  return object.is_object() && object.contains("name") && object["name"].is_string() ? object["name"].get<std::string>()
                                                                                     : std::string();
}

// A Keras model file is the JSON of a layer list: 16 MiB is room for
// thousands of layers, and refuses a mistaken path to a weights file at once.
constexpr std::uint64_t kMaxKerasFileBytes = 16ull << 20;

[[noreturn]] void fail(const std::string& file, const std::string& where, const std::string& what) {
  throw std::invalid_argument(file + ": " + where + ": " + what);
}

}  // namespace


KerasModel parseKerasModel(const json& j, const std::string& file) {
  if (!j.is_object()) fail(file, "(document)", "expected a Keras model object, got " + std::string(j.type_name()));
  KerasModel m;
  m.format = j.contains("module") || j.contains("registered_name") ? "keras3" : "tf2";
  if (j.contains("keras_version") && j.at("keras_version").is_string()) m.kerasVersion = j.at("keras_version").get<std::string>();
  const std::string cls = kerasClassName(j);
  if (cls != "Sequential" && cls != "Functional" && cls != "Model")
    fail(file, "class_name", cls.empty() ? "missing (is this a model.to_json() file?)"
                                         : "'" + cls + "' is not modelled (Sequential, or a Functional Model)");
  // (Keras 2.0-2.2 wrote a Sequential model's config as the bare list of its layers.)
  const bool bareList = cls == "Sequential" && j.contains("config") && j.at("config").is_array();
  if (!bareList && (!j.contains("config") || !j.at("config").is_object()))
    fail(file, "config", "missing (expected the model's config)");
  if (!bareList) m.name = nameIn(j.at("config"));

  std::string dtype;  // the policy of the first layer with one; every other must agree
  std::string supported;
  for (const auto& s : kerasLayerClasses()) supported += (supported.empty() ? "" : ", ") + s;
  const KerasGraph graph = flattenKerasModel(j, file);
  if (graph.inputLayers.size() > 1)
    fail(file, "config.input_layers", std::to_string(graph.inputLayers.size()) + " inputs (models with several inputs are not modelled)");
  LayerConnections connections;
  connections.inputsKey = "inbound_nodes";
  connections.outputKey = "config.output_layers";
  if (graph.outputs.size() > 1) fail(file, "config.output_layers", "several outputs are not modelled");
  if (!graph.outputs.empty()) connections.output = graph.outputs[0];
  bool haveInput = false;
  if (!graph.inputLayers.empty()) {
    const json& input = *graph.inputLayers[0];
    std::string name = nameIn(input.at("config"));
    if (name.empty()) name = nameIn(input);
    KerasConfig c(input.at("config"), file, "layer '" + name + "' (InputLayer)");
    const char* key = c.has("batch_shape") ? "batch_shape" : "batch_input_shape";
    if (!c.has(key)) c.fail(key, "missing (needs the input's shape)");
    m.inputShape = c.batchShape(key, m.batchSize);
    c.ignore({"name", "dtype", "sparse", "ragged", "input_tensor", "optional"});
    if (c.boolean("sparse", false)) c.fail("sparse", "true is not modelled (dense inputs only)");
    if (c.boolean("ragged", false)) c.fail("ragged", "true is not modelled (dense inputs only)");
    c.check();
    haveInput = true;
    connections.modelInput = name;
  }
  std::map<std::string, std::string> whereOf;  // by call name, for errors
  for (const KerasCall& call : graph.calls) {
    const std::string& where = call.where;
    if (std::find(kerasLayerClasses().begin(), kerasLayerClasses().end(), call.cls) == kerasLayerClasses().end())
      fail(file, where, "class_name: '" + call.cls + "' is not supported (supported: " + supported + ")");
    KerasConfig c(*call.config, file, where);
    c.setFormat(m.format);  // a few names changed meaning in Keras 3 (hard_sigmoid)
    if (!haveInput) {  // TF 2.x: the first layer's batch_input_shape
      const char* key = c.has("batch_input_shape") ? "batch_input_shape" : "batch_shape";
      if (!c.has(key)) fail(file, where, "batch_input_shape: missing (the first layer must give the input's shape)");
      m.inputShape = c.batchShape(key, m.batchSize);
      haveInput = true;
    }
    KerasLayer layer = readKerasLayer(c, call.cls);
    if (dtype.empty()) dtype = layer.dtype;
    else if (layer.dtype != dtype)
      fail(file, where, "dtype: '" + layer.dtype + "' differs from the model's '" + dtype +
                            "' (one policy for the whole model is modelled)");
    layer.spec.name = call.name;
    layer.spec.weightsOf = call.weightsOf;
    whereOf[call.name] = where;
    m.layers.push_back(std::move(layer.spec));
    connections.inputs.push_back(call.inputs);
  }
  if (m.layers.empty()) fail(file, "config.layers", "no layer after the input");
  const auto where = [&](const std::vector<LayerSpec>& list, std::size_t i, const std::string& key) {
    return whereOf[list[i].name] + (key.empty() ? "" : ": " + key);
  };
  connectLayers(m.layers, connections, file, [&](std::size_t i, const std::string& key) { return where(m.layers, i, key); });
  m.dtype = dtype.empty() ? "float32" : dtype;
  if (std::find(m.inputShape.begin(), m.inputShape.end(), 0) == m.inputShape.end())
    inferLayerShapes(m.layers, m.inputShape, file, [&](std::size_t i, const std::string& key) { return where(m.layers, i, key); });
  if (j.contains("compile_config") && !j.at("compile_config").is_null()) {
    const KerasCompileConfig cc = readKerasCompileConfig(j.at("compile_config"), file);
    m.optimizer = cc.optimizer;
    m.loss = cc.loss;
    m.stepsPerExecution = cc.stepsPerExecution;
  }
  return m;
}

KerasModel loadKerasModel(const std::string& path) {
  const std::string text = util::readInputFile(path, "Keras model file", kMaxKerasFileBytes);
  util::checkJsonNesting(text, path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    // The parser stopped at the last byte: the document ends early.
    const bool truncated = e.byte + 1 >= text.size();
    throw std::invalid_argument(path + ": not valid JSON" +
                                (truncated ? " (the file ends early: truncated at byte " + std::to_string(text.size()) + ")" : "") +
                                ": " + util::jsonErrorText(e.what()));
  } catch (const json::exception& e) {
    throw std::invalid_argument(path + ": not valid JSON: " + util::jsonErrorText(e.what()));
  }
  return parseKerasModel(j, path);
}

}  // namespace ipusim::scheduler
