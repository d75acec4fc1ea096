#include "scheduler/models/keras_model.hpp"

#include "model/util/json_nesting.hpp"
#include "model/util/json_unique_keys.hpp"
#include "model/util/json_error_text.hpp"
#include "scheduler/models/keras_archive.hpp"
#include "scheduler/models/keras_compile.hpp"
#include "scheduler/models/keras1_spellings.hpp"
#include "scheduler/models/keras_graph.hpp"
#include "scheduler/layers/layer.hpp"
#include "scheduler/models/keras_layer.hpp"
#include "scheduler/models/layer_graph.hpp"
#include "scheduler/models/layer_shapes.hpp"

#include <algorithm>
#include <fstream>
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

// keras.applications' MobileNet (Keras 2.2) ends in Activation('softmax') over
// [1, 1, classes] and then a Reshape to [classes]: the softmax is not the
// model's last op, which a loss on probabilities needs. The softmax is over
// the last axis, which the reshape keeps, so the two commute: the reshape is
// moved before it (the same function), and the softmax ends the model.
// Returns whether it moved them.
bool moveSoftmaxAfterFinalReshape(KerasModel& m) {
  if (m.outputs.size() > 1 || m.layers.size() < 2) return false;
  const std::size_t out = m.layers.size() - 1;
  LayerSpec& reshape = m.layers[out];
  if ((reshape.kind != layer_kind::kReshape && reshape.kind != layer_kind::kFlatten) || reshape.inputs.size() != 1 ||
      isModelInput(reshape.inputs[0]))
    return false;
  const std::size_t p = reshape.inputs[0];
  const LayerSpec& softmax = m.layers[p];
  if (softmax.kind != layer_kind::kActivation || softmax.activation != Activation::Softmax ||
      softmax.outputShape.empty() || reshape.outputShape.empty() || softmax.outputShape.back() != reshape.outputShape.back())
    return false;
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (i != out && std::count(m.layers[i].inputs.begin(), m.layers[i].inputs.end(), p)) return false;
  // The softmax moves to the end: the layers after it shift down by one.
  std::vector<LayerSpec> reordered;
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (i != p) reordered.push_back(m.layers[i]);
  reordered.push_back(m.layers[p]);
  auto moved = [&](std::size_t j) { return isModelInput(j) || j < p ? j : j - 1; };
  for (std::size_t i = 0; i + 1 < reordered.size(); ++i)
    for (std::size_t& j : reordered[i].inputs) j = moved(j);
  LayerSpec& newReshape = reordered[reordered.size() - 2];
  LayerSpec& newSoftmax = reordered.back();
  newReshape.inputs.clear();
  for (std::size_t j : m.layers[p].inputs) newReshape.inputs.push_back(moved(j));
  newSoftmax.inputs = {reordered.size() - 2};
  m.layers = std::move(reordered);
  if (!m.outputs.empty()) m.outputs = {m.layers.size() - 1};
  return true;
}

// The top model's InputLayers in config.input_layers' order (the order its
// inputs are fed in), else in the order of its layers.
std::vector<const json*> inputsInOrder(const json& model, const KerasGraph& graph, const std::string& file) {
  const json* config = model.contains("config") && model.at("config").is_object() ? &model.at("config") : nullptr;
  if (!config || !config->contains("input_layers") || graph.inputLayers.size() < 2) return graph.inputLayers;
  const json& list = config->at("input_layers");
  std::vector<const json*> ordered;
  for (const json& ref : list) {
    // [["name", 0, 0], ...], or a bare ["name", 0, 0] for one input.
    const json& named = ref.is_array() && !ref.empty() ? ref[0] : ref;
    if (!named.is_string()) fail(file, "config.input_layers", "cannot read " + ref.dump() + " (expected [name, 0, 0])");
    const auto it = std::find_if(graph.inputLayers.begin(), graph.inputLayers.end(), [&](const json* l) {
      return nameIn(*l) == named.get<std::string>() || nameIn(l->at("config")) == named.get<std::string>();
    });
    if (it == graph.inputLayers.end())
      fail(file, "config.input_layers", "'" + named.get<std::string>() + "' names no InputLayer of the model");
    ordered.push_back(*it);
  }
  if (ordered.size() != graph.inputLayers.size())
    fail(file, "config.input_layers", "lists " + std::to_string(ordered.size()) + " inputs but the model has " +
                                          std::to_string(graph.inputLayers.size()) + " InputLayers");
  return ordered;
}

// "keras3" for a file Keras 3 wrote, else "tf2" (Keras 1 and 2, TF 2.x).
// TF 2.13-2.15 (the tf-keras that became Keras 3's serializer) already wrote
// "module" and "registered_name" keys like Keras 3, but means Keras 2 by
// them (hard_sigmoid, a None steps_per_execution, ...): its to_json() names
// keras_version 2.x, its functional module is keras.src.engine (Keras 3's
// keras.src.models), and its InputLayer and first layers carry
// batch_input_shape, which Keras 3 spells batch_shape.
std::string kerasFormatOf(const json& j) {
  if (!j.contains("module") && !j.contains("registered_name")) return "tf2";
  auto text = [&](const char* key) {
    return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : std::string();
  };
  const std::string version = text("keras_version");
  if (!version.empty() && version[0] != '3') return "tf2";
  const std::string module = text("module");
  if (module.rfind("keras.src.engine", 0) == 0 || module.rfind("keras.engine", 0) == 0) return "tf2";
  const json* config = j.contains("config") ? &j.at("config") : nullptr;
  const json* layers = config && config->is_object() && config->contains("layers") ? &config->at("layers") : nullptr;
  if (layers && layers->is_array())
    for (const json& l : *layers)
      if (l.is_object() && l.contains("config") && l.at("config").is_object() &&
          l.at("config").contains("batch_input_shape"))
        return "tf2";
  return "keras3";
}

}  // namespace


KerasModel parseKerasModel(const json& j, const std::string& file, KerasReplaced replaced) {
  if (!j.is_object()) fail(file, "(document)", "expected a Keras model object, got " + std::string(j.type_name()));
  KerasModel m;
  m.format = kerasFormatOf(j);
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
  LayerConnections connections;
  connections.inputsKey = "inbound_nodes";
  connections.outputKey = "config.output_layers";
  connections.outputs = graph.outputs;
  connections.modelInputs.clear();
  for (const json* input : inputsInOrder(j, graph, file)) {
    std::string name = nameIn(input->at("config"));
    if (name.empty()) name = nameIn(*input);
    KerasConfig c(input->at("config"), file, "layer '" + name + "' (InputLayer)");
    const char* key = c.has("batch_shape") ? "batch_shape" : "batch_input_shape";
    if (!c.has(key)) c.fail(key, "missing (needs the input's shape)");
    std::uint32_t batch = 0;
    m.inputs.push_back({name, c.batchShape(key, batch)});
    if (m.inputs.size() > 1 && batch != m.batchSize)
      c.fail(key, "a batch size of " + std::to_string(batch) + " where the model's first input has " +
                      std::to_string(m.batchSize));
    m.batchSize = batch;
    // (Keras 1 wrote the dtype as input_dtype: the images are fed as floats whatever it says.)
    c.ignore({"name", "dtype", "input_dtype", "sparse", "ragged", "input_tensor", "optional"});
    if (c.boolean("sparse", false)) c.fail("sparse", "true is not modelled (dense inputs only)");
    if (c.boolean("ragged", false)) c.fail("ragged", "true is not modelled (dense inputs only)");
    c.check();
    connections.modelInputs.push_back(name);
  }
  if (m.inputs.size() > kMaxModelInputs)
    fail(file, "config.input_layers", std::to_string(m.inputs.size()) + " inputs (at most " +
                                          std::to_string(kMaxModelInputs) + " are modelled)");
  bool haveInput = !m.inputs.empty();
  if (connections.modelInputs.empty()) connections.modelInputs = {"input"};
  std::map<std::string, std::string> whereOf;  // by call name, for errors
  for (const KerasCall& call : graph.calls) {
    const std::string& where = call.where;
    // A Keras 1 layer in Keras 2's words (a TF 2.x file or older; Keras 3 never wrote Keras 1's).
    std::optional<Keras2Spelling> keras2;
    if (m.format == "tf2") keras2 = keras2Spelling(call.cls, *call.config, file, where);
    const std::string& cls = keras2 ? keras2->cls : call.cls;
    if (std::find(kerasLayerClasses().begin(), kerasLayerClasses().end(), cls) == kerasLayerClasses().end())
      fail(file, where, "class_name: '" + call.cls + "' is not supported (supported: " + supported + ")");
    KerasConfig c(keras2 ? keras2->config : *call.config, file, where);
    if (keras2) c.setFileKeys(keras2->fileKeys);
    c.setFormat(m.format);  // a few names changed meaning in Keras 3 (hard_sigmoid)
    if (!haveInput) {  // TF 2.x: the first layer's batch_input_shape
      const char* key = c.has("batch_input_shape") ? "batch_input_shape" : "batch_shape";
      if (!c.has(key)) fail(file, where, "batch_input_shape: missing (the first layer must give the input's shape)");
      m.inputs.push_back({"input", c.batchShape(key, m.batchSize)});
      haveInput = true;
    }
    KerasLayer layer = readKerasLayer(c, cls);
    KerasConfig keywords(call.keywords, file, where + ": the call's keyword arguments");
    layerOfKerasClass(cls)->readKerasCall(keywords, layer.spec);
    if (dtype.empty()) dtype = layer.dtype;
    else if (layer.dtype != dtype)
      fail(file, where, "dtype: '" + layer.dtype + "' differs from the model's '" + dtype +
                            "' (one policy for the whole model is modelled)");
    layer.spec.name = call.name;
    layer.spec.weightsOf = call.weightsOf;
    if (call.frozenByModel) layer.spec.freeze();
    whereOf[call.name] = where;
    m.classOf[call.name] = cls;
    m.layers.push_back(std::move(layer.spec));
    connections.inputs.push_back(call.inputs);
  }
  if (m.layers.empty()) fail(file, "config.layers", "no layer after the input");
  const auto where = [&](const std::vector<LayerSpec>& list, std::size_t i, const std::string& key) {
    return whereOf[list[i].name] + (key.empty() ? "" : ": " + key);
  };
  m.outputs = connectLayers(m.layers, connections, file,
                            [&](std::size_t i, const std::string& key) { return where(m.layers, i, key); });
  m.dtype = dtype.empty() ? "float32" : dtype;
  // The examples are streamed as one tuple: one input's shape, or the
  // elements of every input one after the other.
  bool known = true;
  std::vector<std::vector<std::uint64_t>> shapes;
  for (const ModelInput& input : m.inputs) {
    known = known && std::find(input.shape.begin(), input.shape.end(), 0) == input.shape.end();
    shapes.push_back(input.shape);
  }
  if (m.inputs.size() == 1) {
    m.inputShape = m.inputs[0].shape;
  } else {
    for (const ModelInput& input : m.inputs)
      if (std::find(input.shape.begin(), input.shape.end(), 0) != input.shape.end())
        fail(file, "layer '" + input.name + "' (InputLayer)",
             "a size left unknown: a model with several inputs must give every input's shape");
    std::uint64_t elements = 0;
    for (const ModelInput& input : m.inputs) elements += elementsOf(input.shape);
    m.inputShape = {elements};
  }
  if (known) {
    const LayerKeyNamer namer = [&](std::size_t i, const std::string& key) { return where(m.layers, i, key); };
    inferLayerShapes(m.layers, shapes, file, namer);
    if (moveSoftmaxAfterFinalReshape(m)) inferLayerShapes(m.layers, shapes, file, namer);
  }
  for (const LayerSpec& l : m.layers) m.where.push_back(whereOf[l.name]);
  if (j.contains("compile_config") && !j.at("compile_config").is_null()) {
    const KerasCompileConfig cc =
        readKerasCompileConfig(j.at("compile_config"), file, m.format, replaced.loss, replaced.optimizer);
    m.optimizer = cc.optimizer;
    m.loss = cc.loss;
    m.stepsPerExecution = cc.stepsPerExecution;
    m.metrics = cc.metrics;
  }
  return m;
}

KerasModel loadKerasModel(const std::string& path, KerasReplaced replaced) {
  // The file itself, or a .keras archive's config.json (keras_archive.hpp).
  const std::string text = readKerasModelText(path, kMaxKerasFileBytes);
  util::checkJsonNesting(text, path);
  // A .keras archive's errors name its config.json.
  std::string head(4, '\0');
  std::ifstream(path, std::ios::binary).read(&head[0], 4);
  const bool archive = looksLikeZip(head);
  json j;
  try {
    // A key given twice is refused by its path.
    j = util::parseJsonWithUniqueKeys(text, archive ? path + ": config.json" : path);
  } catch (const json::parse_error& e) {
    // The parser stopped at the last byte: the document ends early.
    const bool truncated = e.byte + 1 >= text.size();
    const bool archiveName = path.size() > 6 && path.compare(path.size() - 6, 6, ".keras") == 0;
    // A .keras archive whose config.json is not JSON names that entry: "not
    // a .keras archive (a zip file)" said the opposite of what the file is.
    if (archive)
      throw std::invalid_argument(path + ": config.json (the archive's model JSON): not valid JSON" +
                                  (truncated ? " (it ends early: truncated at byte " + std::to_string(text.size()) + ")" : "") +
                                  ": " + util::jsonErrorText(e.what()));
    throw std::invalid_argument(path + ": not valid JSON" +
                                (archiveName ? std::string(" and not a .keras archive (a zip file)") : std::string()) +
                                (truncated ? " (the file ends early: truncated at byte " + std::to_string(text.size()) + ")" : "") +
                                ": " + util::jsonErrorText(e.what()));
  } catch (const json::exception& e) {
    throw std::invalid_argument(path + ": not valid JSON: " + util::jsonErrorText(e.what()));
  }
  return parseKerasModel(unwrapKerasDocument(std::move(j), path), path, replaced);
}

json unwrapKerasDocument(json j, const std::string& path) {
  // model.to_json()'s string itself written as JSON (json.dump(model.to_json())).
  if (j.is_string()) {
    const std::string inner = j.get<std::string>();
    util::checkJsonNesting(inner, path + " (the model JSON inside its string)");
    j = util::parseJsonWithUniqueKeys(inner, path + " (the model JSON inside its string)", false);
    if (j.is_discarded())
      throw std::invalid_argument(path + ": (document): a string that is not a model's JSON (expected a Keras model object)");
  }
  // TensorFlow.js's model.json: its modelTopology is the Keras model
  // (tfjs-layers' save), or holds it as model_config (the converter's).
  if (j.is_object() && j.contains("modelTopology") && !j.contains("class_name")) {
    json topology = j.at("modelTopology");
    if (topology.is_object() && topology.contains("model_config")) {
      json model = topology.at("model_config");
      if (model.is_object() && topology.contains("keras_version")) model["keras_version"] = topology.at("keras_version");
      return model;
    }
    return topology;
  }
  return j;
}

}  // namespace ipusim::scheduler
