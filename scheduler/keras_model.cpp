#include "scheduler/keras_model.hpp"

#include "model/util/input_file.hpp"
#include "model/util/json_error_text.hpp"
#include "scheduler/keras_compile.hpp"
#include "scheduler/keras_layer.hpp"
#include "scheduler/layer_shapes.hpp"

#include <algorithm>
#include <functional>
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
    if (node.is_array()) {
      for (const json& in : node)
        if (in.is_array() && !in.empty() && in[0].is_string()) names.push_back(in[0].get<std::string>());
        else fail(file, where, "inbound_nodes: cannot read " + in.dump());
    } else if (node.is_object() && node.contains("args")) {
      std::function<void(const json&)> collect = [&](const json& a) {
        if (a.is_array()) {
          for (const json& e : a) collect(e);
        } else if (kerasClassName(a) == "__keras_tensor__") {
          const bool hasConfig = a.contains("config") && a["config"].is_object();
          const json h = hasConfig ? a["config"].value("keras_history", json()) : json();
          if (!h.is_array() || h.empty() || !h[0].is_string())
            fail(file, where, "inbound_nodes: a tensor without keras_history: " + a.dump());
          names.push_back(h[0].get<std::string>());
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

const std::vector<std::string>& supportedKerasLayers() {
  static const std::vector<std::string> classes{"InputLayer", "Flatten", "Reshape", "Dense", "Dropout",
                                                "BatchNormalization", "Activation", "Conv2D", "MaxPooling2D",
                                                "AveragePooling2D"};
  return classes;
}

KerasModel parseKerasModel(const json& j, const std::string& file) {
  if (!j.is_object()) fail(file, "(document)", "expected a Keras model object, got " + std::string(j.type_name()));
  KerasModel m;
  m.format = j.contains("module") || j.contains("registered_name") ? "keras3" : "tf2";
  if (j.contains("keras_version") && j.at("keras_version").is_string()) m.kerasVersion = j.at("keras_version").get<std::string>();
  const std::string cls = kerasClassName(j);
  const bool functional = cls == "Functional" || cls == "Model";
  if (cls != "Sequential" && !functional)
    fail(file, "class_name", cls.empty() ? "missing (is this a model.to_json() file?)"
                                         : "'" + cls + "' is not modelled (Sequential, or a Functional Model that is a chain)");
  if (!j.contains("config") || !j.at("config").is_object()) fail(file, "config", "missing (expected the model's config)");
  const json& config = j.at("config");
  m.name = nameIn(config);
  if (!config.contains("layers") || !config.at("layers").is_array() || config.at("layers").empty())
    fail(file, "config.layers", "expected a non-empty list of layers");

  std::string dtype;  // the policy of the first layer with one; every other must agree
  std::string previous;  // functional: the layer the next must read
  bool haveInput = false;
  std::string supported;
  for (const auto& s : supportedKerasLayers()) supported += (supported.empty() ? "" : ", ") + s;
  std::vector<std::optional<std::int64_t>> axes;
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
    if (std::find(supportedKerasLayers().begin(), supportedKerasLayers().end(), lcls) == supportedKerasLayers().end())
      fail(file, where, "class_name: '" + lcls + "' is not supported (supported: " + supported + ")");
    if (functional) {
      const std::vector<std::string> in = inboundLayers(l.value("inbound_nodes", json::array()), file, where);
      if (lcls == "InputLayer") {
        if (!in.empty()) fail(file, where, "inbound_nodes: an InputLayer with inputs");
      } else if (in.size() != 1 || in[0] != previous) {
        std::string list;
        for (const auto& n : in) list += (list.empty() ? "'" : ", '") + n + "'";
        fail(file, where, "inbound_nodes: reads " + (list.empty() ? "nothing" : list) + ", not the layer before it ('" +
                              previous + "'): only functional models that are a chain are modelled");
      }
      previous = name;
    }
    KerasConfig c(lconfig, file, where);
    if (lcls == "InputLayer") {
      if (haveInput) fail(file, where, "a second input (models with several inputs are not modelled)");
      if (!m.layers.empty()) fail(file, where, "an InputLayer after other layers");
      const char* key = c.has("batch_shape") ? "batch_shape" : "batch_input_shape";
      if (!c.has(key)) fail(file, where, "batch_shape: missing (needs the input's shape)");
      m.inputShape = c.batchShape(key, m.batchSize);
      c.ignore({"name", "dtype", "sparse", "ragged", "input_tensor", "optional"});
      if (c.boolean("sparse", false)) c.fail("sparse", "true is not modelled (dense inputs only)");
      if (c.boolean("ragged", false)) c.fail("ragged", "true is not modelled (dense inputs only)");
      c.check();
      haveInput = true;
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
    m.layers.push_back(std::move(layer.spec));
    axes.push_back(layer.normalizationAxis);
  }
  if (m.layers.empty()) fail(file, "config.layers", "no layer after the input");
  if (functional) {
    // The model's output must be the chain's end.
    const json& outs = config.value("output_layers", json());
    const json* first = outs.is_array() && !outs.empty() ? (outs[0].is_array() ? &outs[0] : &outs) : nullptr;
    if (first && (outs.size() > 1 && outs[0].is_array()))
      fail(file, "config.output_layers", "several outputs are not modelled");
    if (first && !first->empty() && (*first)[0].is_string() && (*first)[0].get<std::string>() != previous)
      fail(file, "config.output_layers", "the output is '" + (*first)[0].get<std::string>() +
                                             "', not the chain's last layer ('" + previous + "')");
  }
  m.dtype = dtype.empty() ? "float32" : dtype;
  inferLayerShapes(m.layers, m.inputShape, file, [&](std::size_t i, const std::string& key) {
    return "layer '" + m.layers[i].name + "'" + (key.empty() ? "" : ": " + key);
  });
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (axes[i]) {  // BatchNormalization: the channels axis, counted with the batch
      const std::int64_t rank = std::int64_t(m.layers[i].inputShape.size()) + 1;
      if (*axes[i] != -1 && *axes[i] != rank - 1)
        fail(file, "layer '" + m.layers[i].name + "' (BatchNormalization)",
             "axis: " + std::to_string(*axes[i]) + " is not modelled (only the last axis, -1 or " +
                 std::to_string(rank - 1) + ", of a rank-" + std::to_string(rank) + " input)");
    }
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
