#include "scheduler/models/keras_model.hpp"

#include "model/util/input_file.hpp"
#include "model/util/json_nesting.hpp"
#include "model/util/json_error_text.hpp"
#include "scheduler/models/keras_compile.hpp"
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

std::string layerWhere(const std::string& name, const std::string& cls) {
  return "layer '" + name + "' (" + cls + ")";
}

// The layer names a functional layer's inbound node reads, in either format:
// TF 2.x [[["dense", 0, 0, {}]]], Keras 3 [{"args": [{"class_name":
// "__keras_tensor__", "config": {"keras_history": ["dense", 0, 0]}}], "kwargs": {}}].
std::vector<std::string> inboundLayers(const json& nodes, const std::string& file, const std::string& where) {
  std::vector<std::string> names;
  if (!nodes.is_array()) fail(file, where, "inbound_nodes: expected a list, got " + nodes.dump());
  if (nodes.size() > 1) fail(file, where, "inbound_nodes: the layer is called " + std::to_string(nodes.size()) +
                                              " times (shared layers are not modelled)");
  for (const json& node : nodes) {
    // [name, node index, tensor index]: a node index above 0 is the output
    // of the layer's second call, a tensor index above 0 its second output.
    auto history = [&](const json& h) {
      if (!h.is_array() || h.empty() || !h[0].is_string()) return false;
      for (std::size_t k = 1; k < 3 && k < h.size(); ++k)
        if (h[k].is_number_integer() && h[k].get<std::int64_t>() != 0)
          fail(file, where, "inbound_nodes: reads " + h.dump() + ", an output of a shared layer's later call or a layer's "
                            "second output (not modelled)");
      names.push_back(h[0].get<std::string>());
      return true;
    };
    if (node.is_array()) {
      for (const json& in : node)
        if (!history(in)) fail(file, where, "inbound_nodes: cannot read " + in.dump());
    } else if (node.is_object() && node.contains("args")) {
      std::function<void(const json&)> collect = [&](const json& a) {
        if (a.is_array()) {
          for (const json& e : a) collect(e);
        } else if (kerasClassName(a) == "__keras_tensor__") {
          const bool hasConfig = a.contains("config") && a["config"].is_object();
          const json h = hasConfig ? a["config"].value("keras_history", json()) : json();
          if (!history(h)) fail(file, where, "inbound_nodes: a tensor without keras_history: " + a.dump());
        }
      };
      collect(node.at("args"));
      const json kwargs = node.value("kwargs", json::object());
      for (auto it = kwargs.begin(); it != kwargs.end(); ++it)
        if (it.value().is_object() && kerasClassName(it.value()) == "__keras_tensor__")
          fail(file, where, "inbound_nodes: kwargs." + it.key() + ": a tensor passed by keyword is not modelled");
    } else {
      fail(file, where, "inbound_nodes: cannot read " + node.dump());
    }
  }
  return names;
}

}  // namespace


KerasModel parseKerasModel(const json& j, const std::string& file) {
  if (!j.is_object()) fail(file, "(document)", "expected a Keras model object, got " + std::string(j.type_name()));
  KerasModel m;
  m.format = j.contains("module") || j.contains("registered_name") ? "keras3" : "tf2";
  if (j.contains("keras_version") && j.at("keras_version").is_string()) m.kerasVersion = j.at("keras_version").get<std::string>();
  const std::string cls = kerasClassName(j);
  const bool functional = cls == "Functional" || cls == "Model";
  if (cls != "Sequential" && !functional)
    fail(file, "class_name", cls.empty() ? "missing (is this a model.to_json() file?)"
                                         : "'" + cls + "' is not modelled (Sequential, or a Functional Model)");
  if (!j.contains("config") || !j.at("config").is_object()) fail(file, "config", "missing (expected the model's config)");
  const json& config = j.at("config");
  m.name = nameIn(config);
  if (!config.contains("layers") || !config.at("layers").is_array() || config.at("layers").empty())
    fail(file, "config.layers", "expected a non-empty list of layers");

  std::string dtype;  // the policy of the first layer with one; every other must agree
  bool haveInput = false;
  std::string supported;
  for (const auto& s : kerasLayerClasses()) supported += (supported.empty() ? "" : ", ") + s;
  LayerConnections connections;
  connections.inputsKey = "inbound_nodes";
  connections.outputKey = "config.output_layers";
  std::map<std::string, std::string> classOf;  // by layer name, for errors
  const json& layers = config.at("layers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const json& l = layers[i];
    const std::string lcls = kerasClassName(l);
    const json& lconfig = l.is_object() ? l.value("config", json()) : json();
    std::string name = nameIn(lconfig);
    if (name.empty()) name = nameIn(l);
    if (name.empty()) name = "#" + std::to_string(i);
    if (lcls.empty() || !lconfig.is_object())
      fail(file, "config.layers[" + std::to_string(i) + "]", "expected {\"class_name\": ..., \"config\": {...}}");
    const std::string where = layerWhere(name, lcls);
    if (std::find(kerasLayerClasses().begin(), kerasLayerClasses().end(), lcls) == kerasLayerClasses().end())
      fail(file, where, "class_name: '" + lcls + "' is not supported (supported: " + supported + ")");
    std::vector<std::string> in;
    if (functional) {
      in = inboundLayers(l.value("inbound_nodes", json::array()), file, where);
      if (lcls == "InputLayer" && !in.empty()) fail(file, where, "inbound_nodes: an InputLayer with inputs");
      if (lcls != "InputLayer" && in.empty()) fail(file, where, "inbound_nodes: the layer reads nothing");
    }
    KerasConfig c(lconfig, file, where);
    if (lcls == "InputLayer") {
      if (haveInput) fail(file, where, "a second input (models with several inputs are not modelled)");
      if (!m.layers.empty() && !functional) fail(file, where, "an InputLayer after other layers");
      const char* key = c.has("batch_shape") ? "batch_shape" : "batch_input_shape";
      if (!c.has(key)) fail(file, where, "batch_shape: missing (needs the input's shape)");
      m.inputShape = c.batchShape(key, m.batchSize);
      c.ignore({"name", "dtype", "sparse", "ragged", "input_tensor", "optional"});
      if (c.boolean("sparse", false)) c.fail("sparse", "true is not modelled (dense inputs only)");
      if (c.boolean("ragged", false)) c.fail("ragged", "true is not modelled (dense inputs only)");
      c.check();
      haveInput = true;
      connections.modelInput = name;
      continue;
    }
    if (!haveInput) {  // TF 2.x: the first layer's batch_input_shape
      const char* key = c.has("batch_input_shape") ? "batch_input_shape" : "batch_shape";
      if (!c.has(key)) fail(file, where, "batch_input_shape: missing (the first layer must give the input's shape)");
      m.inputShape = c.batchShape(key, m.batchSize);
      haveInput = true;
    }
    KerasLayer layer = readKerasLayer(c, lcls);
    if (dtype.empty()) dtype = layer.dtype;
    else if (layer.dtype != dtype)
      fail(file, where, "dtype: '" + layer.dtype + "' differs from the model's '" + dtype +
                            "' (one policy for the whole model is modelled)");
    layer.spec.name = name;
    classOf[name] = lcls;
    m.layers.push_back(std::move(layer.spec));
    connections.inputs.push_back(in);
  }
  if (m.layers.empty()) fail(file, "config.layers", "no layer after the input");
  if (functional) {
    // One output: output_layers [["name", 0, 0]] (TF 2.x, Keras 3), or a bare ["name", 0, 0].
    const json& outs = config.value("output_layers", json());
    const json* first = outs.is_array() && !outs.empty() ? (outs[0].is_array() ? &outs[0] : &outs) : nullptr;
    if (first && (outs.size() > 1 && outs[0].is_array()))
      fail(file, "config.output_layers", "several outputs are not modelled");
    if (first && !first->empty() && (*first)[0].is_string()) connections.output = (*first)[0].get<std::string>();
  }
  const auto where = [&](const std::vector<LayerSpec>& list, std::size_t i, const std::string& key) {
    const std::string& name = list[i].name;
    return layerWhere(name, classOf[name]) + (key.empty() ? "" : ": " + key);
  };
  connectLayers(m.layers, connections, file, [&](std::size_t i, const std::string& key) { return where(m.layers, i, key); });
  m.dtype = dtype.empty() ? "float32" : dtype;
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
