#include "scheduler/models/keras_graph.hpp"

#include "scheduler/models/keras_config.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

using json = nlohmann::json;

[[noreturn]] void graphFail(const std::string& file, const std::string& where, const std::string& what) {
  throw std::invalid_argument(file + ": " + where + ": " + what);
}

std::string objectName(const json& object) {
  return object.is_object() && object.contains("name") && object["name"].is_string() ? object["name"].get<std::string>()
                                                                                     : std::string();
}

// A tensor a call reads: the output of call `node` of `layer`.
struct Ref {
  std::string layer;
  std::int64_t node = 0;
};
// An operand of a TF op: a tensor, or a constant.
struct Operand {
  std::optional<Ref> tensor;
  double constant = 0;
};

// [name, node index, tensor index(, kwargs)] (TF 2.x) or a Keras 3
// keras_history; nullopt when `h` is not one. A tensor index other than 0
// (a layer's second or later output, or none) and a negative node index are refused.
std::optional<Ref> historyRef(const json& h, const std::string& file, const std::string& where) {
  if (!h.is_array() || h.size() < 3 || !h[0].is_string() || !h[1].is_number_integer() || !h[2].is_number_integer())
    return std::nullopt;
  // (An unsigned index of 2^63 or more reads negative too.)
  if (h[2].get<std::int64_t>() < 0)
    graphFail(file, where, "inbound_nodes: reads " + h.dump() + ": tensor index " + h[2].dump() +
                               " names no output (expected 0: layers have one output here)");
  if (h[2].get<std::int64_t>() == 1)
    graphFail(file, where, "inbound_nodes: reads " + h.dump() + ", a layer's second output (layers have one output here)");
  // (2^31 was called "a layer's second output" too.)
  if (h[2].get<std::int64_t>() != 0)
    graphFail(file, where, "inbound_nodes: reads " + h.dump() + ": tensor index " + h[2].dump() +
                               ", an output after the layer's first (expected 0: layers have one output here)");
  // (An unsigned index of 2^63 or more reads negative too.)
  if (h[1].get<std::int64_t>() < 0)
    graphFail(file, where, "reads " + h.dump() + ": node index " + h[1].dump() + " names no call of layer '" +
                               h[0].get<std::string>() + "' (expected 0 or more, below its number of calls)");
  return Ref{h[0].get<std::string>(), h[1].get<std::int64_t>()};
}

bool isKerasTensor(const json& a) { return a.is_object() && kerasClassName(a) == "__keras_tensor__"; }

// Tensors a call may pass by keyword that are its operands, in operand order
// after the positional ones (an attention layer's query, value and key).
constexpr const char* kOperandKeywords[] = {"query", "value", "key"};
bool isOperandKeyword(const std::string& key) { return key == "query" || key == "value" || key == "key"; }

std::optional<Ref> kerasTensorRef(const json& a, const std::string& file, const std::string& where) {
  const json h = a.contains("config") && a["config"].is_object() ? a["config"].value("keras_history", json()) : json();
  auto ref = historyRef(h, file, where);
  if (!ref) graphFail(file, where, "inbound_nodes: a tensor without keras_history: " + a.dump());
  return ref;
}

// The operands given by keyword, appended after the `out.size()` positional
// ones as Python binds MultiHeadAttention.call(query, value, key=None)
// (keras/src/layers/attention/multi_head_attention.py): an argument given
// both ways is Keras's TypeError ("got multiple values for argument"), one
// given after a missing one (a key without a value) its "missing a required
// positional argument".
void appendKeywordOperands(std::vector<Operand>& out, const std::map<std::string, Ref>& keywords,
                           const std::string& file, const std::string& where) {
  const std::size_t positional = out.size();
  std::size_t index = 0;
  for (const char* key : kOperandKeywords) {
    const auto it = keywords.find(key);
    if (it != keywords.end() && index < positional)
      graphFail(file, where, std::string("inbound_nodes: kwargs.") + key + ": the " + key +
                                 " is given both by position and by keyword (Keras: TypeError, multiple values for "
                                 "argument '" + key + "')");
    if (it != keywords.end() && index > out.size())
      graphFail(file, where, std::string("inbound_nodes: kwargs.") + key + ": given without the " +
                                 kOperandKeywords[out.size()] + " before it (Keras: TypeError, missing argument '" +
                                 kOperandKeywords[out.size()] + "')");
    if (it != keywords.end()) out.push_back({it->second});
    ++index;
  }
}

// The operands of one inbound node, in argument order.
std::vector<Operand> nodeOperands(const json& node, const std::string& file, const std::string& where) {
  std::vector<Operand> out;
  std::map<std::string, Ref> keywords;  // query, value, key given by keyword
  if (node.is_array()) {  // TF 2.x: [[name, node, tensor, kwargs], ...]
    // TF 2.13+ writes a TFOpLambda's one-tensor node unwrapped: [name, node, tensor, kwargs].
    const bool unwrapped = !node.empty() && node[0].is_string();
    for (const json& entry : unwrapped ? json::array({node}) : node) {
      // A constant first argument: ["_CONSTANT_VALUE", -1, value, kwargs] (TF 2.x's node.py).
      const bool constant = entry.is_array() && entry.size() >= 3 && entry[0] == "_CONSTANT_VALUE";
      if (constant && !entry[2].is_number())
        graphFail(file, where, "inbound_nodes: a constant that is not a number: " + entry[2].dump());
      auto ref = constant ? std::nullopt : historyRef(entry, file, where);
      if (!ref && !constant) graphFail(file, where, "inbound_nodes: cannot read " + entry.dump());
      out.push_back(constant ? Operand{std::nullopt, entry[2].get<double>()} : Operand{ref});
      // TFOpLambda: the op's second operand is the kwarg y (a tensor or a constant).
      if (entry.size() > 3 && entry[3].is_object() && entry[3].contains("y")) {
        const json& y = entry[3]["y"];
        if (auto yref = historyRef(y, file, where)) out.push_back({yref});
        else if (y.is_number()) out.push_back({std::nullopt, y.get<double>()});
        else graphFail(file, where, "inbound_nodes: kwargs.y: expected a tensor or a number, got " + y.dump());
      }
      // An attention layer's later operands by keyword (TF 2.x writes mha(x, x) as
      // [x, 0, 0, {"value": [x, 0, 0]}]); any other tensor by keyword is refused.
      if (entry.size() > 3 && entry[3].is_object())
        for (auto it = entry[3].begin(); it != entry[3].end(); ++it) {
          if (it.key() == "y" || !historyRef(it.value(), file, where)) continue;
          if (!isOperandKeyword(it.key()))
            graphFail(file, where, "inbound_nodes: kwargs." + it.key() + ": a tensor passed by keyword is not modelled");
        }
      if (entry.size() > 3 && entry[3].is_object())
        for (const char* key : kOperandKeywords)
          if (entry[3].contains(key))
            if (auto ref = historyRef(entry[3][key], file, where)) {
              const auto [at, added] = keywords.emplace(key, *ref);
              if (!added && (at->second.layer != ref->layer || at->second.node != ref->node))
                graphFail(file, where, std::string("inbound_nodes: kwargs.") + key +
                                           ": given twice with different tensors (Keras: multiple values for argument '" +
                                           key + "')");
            }
    }
    appendKeywordOperands(out, keywords, file, where);
    return out;
  }
  if (!node.is_object() || !node.contains("args")) graphFail(file, where, "inbound_nodes: cannot read " + node.dump());
  std::function<void(const json&)> collect = [&](const json& a) {
    if (a.is_array()) {
      for (const json& e : a) collect(e);
    } else if (isKerasTensor(a)) {
      out.push_back({kerasTensorRef(a, file, where)});
    } else if (a.is_number()) {
      out.push_back({std::nullopt, a.get<double>()});
    }
  };
  collect(node.at("args"));
  const json kwargs = node.value("kwargs", json::object());
  for (auto it = kwargs.begin(); it != kwargs.end(); ++it)
    if (isKerasTensor(it.value()) && !isOperandKeyword(it.key()))
      graphFail(file, where, "inbound_nodes: kwargs." + it.key() + ": a tensor passed by keyword is not modelled");
  for (const char* key : kOperandKeywords)
    if (kwargs.is_object() && kwargs.contains(key) && isKerasTensor(kwargs[key]))
      keywords.emplace(key, *kerasTensorRef(kwargs[key], file, where));
  appendKeywordOperands(out, keywords, file, where);
  return out;
}

// The call's keyword arguments that are not tensors (use_causal_mask,
// training, ...): TF 2.x repeats them in every entry of a node, Keras 3 gives
// them once.
json nodeKeywords(const json& node, const std::string& file, const std::string& where) {
  json out = json::object();
  auto keep = [&](const json& kwargs) {
    if (!kwargs.is_object()) return;
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it)
      if (!isKerasTensor(it.value()) && !historyRef(it.value(), file, where)) out[it.key()] = it.value();
  };
  if (node.is_array()) {
    const bool unwrapped = !node.empty() && node[0].is_string();
    for (const json& entry : unwrapped ? json::array({node}) : node)
      if (entry.is_array() && entry.size() > 3) keep(entry[3]);
  } else if (node.is_object()) {
    keep(node.value("kwargs", json::object()));
  }
  return out;
}

// The elementwise TF ops modelled, by their names in the three node forms.
enum class TfOp { Add, Subtract, Multiply, Divide, Negate };
std::optional<TfOp> tfOpNamed(const std::string& op) {
  static const std::map<std::string, TfOp> ops{
      // TensorFlowOpLayer node_def.op
      {"AddV2", TfOp::Add}, {"Add", TfOp::Add}, {"Sub", TfOp::Subtract}, {"Mul", TfOp::Multiply},
      {"RealDiv", TfOp::Divide}, {"Neg", TfOp::Negate},
      // TFOpLambda config.function
      {"__operators__.add", TfOp::Add}, {"math.add", TfOp::Add}, {"math.subtract", TfOp::Subtract},
      {"math.multiply", TfOp::Multiply}, {"math.truediv", TfOp::Divide}, {"math.divide", TfOp::Divide},
      {"math.negative", TfOp::Negate},
      // Keras 3 keras.src.ops.numpy classes
      {"Subtract", TfOp::Subtract}, {"Multiply", TfOp::Multiply}, {"Divide", TfOp::Divide},
      {"TrueDivide", TfOp::Divide}, {"Negative", TfOp::Negate}};
  const auto it = ops.find(op);
  return it == ops.end() ? std::nullopt : std::optional<TfOp>(it->second);
}

const char* kTfOpsModelled =
    "modelled: AddV2/Add, Sub, Mul, RealDiv, Neg (TensorFlowOpLayer); __operators__.add, math.add, math.subtract, "
    "math.multiply, math.truediv, math.divide, math.negative (TFOpLambda); Add, Subtract, Multiply, Divide, "
    "TrueDivide, Negative (keras.src.ops.numpy): elementwise merges of two tensors, or a tensor scaled or offset "
    "by a constant";

class Flattener {
 public:
  Flattener(const std::string& file, KerasGraph& g) : file_(file), g_(g) {}

  // Inlines the layers of `model` into the graph. `input`: the call name
  // its input stands for ("" for the top model, whose InputLayers stay the
  // model's inputs); `call`: which call of a nested model this is (its
  // calls' names get "@<call>"). Returns the names of its outputs.
  std::vector<std::string> inlineModel(const json& model, const std::string& input, std::int64_t call) {
    const std::string cls = kerasClassName(model);
    const bool top = input.empty();
    const json noConfig;
    const json& named = model.contains("config") && model.at("config").is_object() ? model.at("config") : noConfig;
    const std::string modelWhere = top ? std::string("config") : "nested model '" + objectName(named) + "'";
    const bool sequential = cls == "Sequential";
    // Keras 2.0-2.2 wrote a Sequential model's config as the bare list of its layers.
    const bool bareList = sequential && model.contains("config") && model.at("config").is_array();
    if (!bareList && (!model.contains("config") || !model.at("config").is_object()))
      graphFail(file_, modelWhere, "config: missing (expected the model's config)");
    if (bareList) g_.madeConfigs.push_back(std::make_unique<json>(json{{"layers", model.at("config")}}));
    const json& config = bareList ? *g_.madeConfigs.back() : model.at("config");
    if (!config.contains("layers") || !config.at("layers").is_array() || config.at("layers").empty())
      graphFail(file_, top ? "config.layers" : modelWhere + ": config.layers", "expected a non-empty list of layers");
    // A model set not trainable freezes every layer in it (Keras 3 writes a
    // model's trainable; a TF 2.x file gives each of its layers trainable: false).
    const bool frozenBefore = frozen_;
    if (config.contains("trainable")) {
      const json& trainable = config.at("trainable");
      if (!trainable.is_boolean())
        graphFail(file_, top ? "config.trainable" : modelWhere + ": config.trainable",
                  "expected true or false, got " + trainable.dump());
      if (!trainable.get<bool>()) frozen_ = true;
    }
    Scope scope;  // (layer, node) -> call name, within this model
    std::string previous = input;  // Sequential: the call the next layer reads
    int nestedInputs = 0;
    const json& layers = config.at("layers");
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const json& l = layers[i];
      const std::string lcls = kerasClassName(l);
      static const json kNoConfig;
      const json& lconfig = l.is_object() && l.contains("config") ? l.at("config") : kNoConfig;  // outlives the call
      // The object's name, which inbound nodes use (a TensorFlowOpLayer's
      // config drops its "tf_op_layer_" prefix), else its config's.
      std::string name = objectName(l);
      if (name.empty()) name = objectName(lconfig);
      if (name.empty()) name = "#" + std::to_string(i);
      // (A nested Sequential from Keras 2.0-2.2 has the bare list of its layers as its config.)
      if (lcls.empty() || !(lconfig.is_object() || (lcls == "Sequential" && lconfig.is_array())))
        graphFail(file_, (top ? "config.layers[" : modelWhere + ": config.layers[") + std::to_string(i) + "]",
             "expected {\"class_name\": ..., \"config\": {...}}");
      const std::string where = "layer '" + name + "' (" + lcls + ")";
      if (lcls == "InputLayer") {
        if (!l.value("inbound_nodes", json::array()).empty()) graphFail(file_, where, "inbound_nodes: an InputLayer with inputs");
        if (top) {
          if (sequential && !g_.calls.empty()) graphFail(file_, where, "an InputLayer after other layers");
          g_.inputLayers.push_back(&l);
          scope[{name, 0}] = name;
          previous = name;
        } else if (adoptInput_) {
          // The first layer of a top Sequential without an InputLayer: its
          // InputLayer is the model's.
          adoptInput_ = false;
          ++nestedInputs;
          g_.inputLayers.push_back(&l);
          scope[{name, 0}] = name;
        } else {
          // (A nested model's one input is what its call reads.)
          if (++nestedInputs > 1) graphFail(file_, where, "a nested model with several inputs is not modelled");
          scope[{name, 0}] = input;
        }
        continue;
      }
      // The operands of each call: a Sequential layer reads the one before
      // (node -1: `previous` is already a call's name).
      std::vector<std::vector<Operand>> calls;
      std::vector<json> keywords;  // per call, its keyword arguments that are not tensors
      if (sequential) {
        if (previous.empty() && !top) graphFail(file_, where, "internal: a nested Sequential without input");
        calls.push_back(previous.empty() ? std::vector<Operand>{} : std::vector<Operand>{Operand{Ref{previous, -1}}});
      } else {
        const json& nodes = l.value("inbound_nodes", json::array());
        if (!nodes.is_array()) graphFail(file_, where, "inbound_nodes: expected a list, got " + nodes.dump());
        for (const json& node : nodes) {
          calls.push_back(nodeOperands(node, file_, where));
          keywords.push_back(nodeKeywords(node, file_, where));
          // Keras's layer(x, training=False) (the transfer-learning idiom
          // for a frozen base model) or training=True (Monte-Carlo dropout)
          // runs the call's dropout, noise and batch normalization in that
          // mode whatever the task; ipusim runs fit's layers in training mode
          // and evaluate's and predict's in inference mode, so such a call
          // would silently compute another model: refused.
          const json& training = keywords.back().contains("training") ? keywords.back()["training"] : json();
          if (!training.is_null())
            graphFail(file_, where, "inbound_nodes: kwargs.training: " + training.dump() +
                                        ": a call that fixes the training mode is not modelled (each layer runs in "
                                        "training mode in fit and in inference mode in evaluate and predict, as "
                                        "Keras runs a call without it); expected no training argument, or null");
        }
        if (calls.empty() || calls[0].empty()) graphFail(file_, where, "inbound_nodes: the layer reads nothing");
      }
      for (std::size_t k = 0; k < calls.size(); ++k) {
        const std::string callName = suffixed(name, std::int64_t(k), call);
        const std::string owner = (k || call) ? name : "";
        std::vector<std::string> inputs;
        for (const Operand& o : calls[k])
          if (o.tensor) inputs.push_back(o.tensor->node < 0 ? o.tensor->layer : resolve(scope, *o.tensor, where));
        if (isKerasModelClass(lcls)) {
          // A top Sequential's first layer without an InputLayer before it
          // reads the model's input (Keras 2.x wrote applications models so).
          if (inputs.empty() && top && sequential && g_.calls.empty() && g_.inputLayers.empty()) {
            adoptInput_ = true;
            inputs.push_back(kModelInputName);
          }
          if (inputs.size() != 1)
            graphFail(file_, where, "a nested model reads " + std::to_string(inputs.size()) + " tensors (one is modelled)");
          const std::vector<std::string> outs = inlineModel(l, inputs[0], std::int64_t(k) + call);
          adoptInput_ = false;
          if (outs.size() != 1) graphFail(file_, where, "a nested model with " + std::to_string(outs.size()) + " outputs (one is modelled)");
          scope[{name, std::int64_t(k) + nodeOffset(layers, config, name, std::int64_t(calls.size()))}] = outs[0];
          previous = outs[0];
          continue;
        }
        KerasCall c{lcls, callName, owner, &lconfig, inputs, where};
        if (k < keywords.size()) c.keywords = keywords[k];
        c.frozenByModel = frozen_;
        if (isTfOpNode(l, lcls)) c = tfOpCall(lcls, lconfig, calls[k], callName, where, scope);
        else if (std::any_of(calls[k].begin(), calls[k].end(), [](const Operand& o) { return !o.tensor; }))
          graphFail(file_, where, "inbound_nodes: a constant operand (only TF op nodes take one)");
        scope[{name, std::int64_t(k)}] = c.name;
        previous = c.name;
        g_.calls.push_back(std::move(c));
      }
    }
    frozen_ = frozenBefore;
    if (sequential) return {previous};
    // output_layers: [["name", 0, 0], ...] (TF 2.x, Keras 3), or a bare ["name", 0, 0].
    const json& outs = config.value("output_layers", json());
    std::vector<std::string> names;
    const std::string key = top ? "config.output_layers" : modelWhere + ": config.output_layers";
    if (!outs.is_array() || outs.empty()) {
      if (top) return {};  // the one layer nothing reads (layer_graph.hpp)
      graphFail(file_, key, "expected the nested model's outputs");
    }
    const bool bare = !outs[0].is_array();
    for (const json& o : bare ? json::array({outs}) : outs) {
      auto ref = historyRef(o, file_, key);
      if (!ref) graphFail(file_, key, "cannot read " + o.dump());
      names.push_back(resolve(scope, *ref, key));
    }
    return names;
  }

 private:
  using Scope = std::map<std::pair<std::string, std::int64_t>, std::string>;

  // The name of a model's input when it has no InputLayer (keras_model.cpp's default).
  static constexpr const char* kModelInputName = "input";

  // Keras 2.x and TF 2.x number a nested functional model's calls from 1
  // (its node 0 joins its own inputs to its outputs): 1 when a reference to
  // nested model `name` (of `calls` calls) in this model's layers or outputs
  // reads node `calls`, else 0.
  std::int64_t nodeOffset(const json& layers, const json& config, const std::string& name, std::int64_t calls) const {
    std::int64_t highest = -1;
    auto see = [&](const std::optional<Ref>& r) {
      if (r && r->layer == name) highest = std::max(highest, r->node);
    };
    for (const json& l : layers) {
      const json nodes = l.is_object() ? l.value("inbound_nodes", json::array()) : json::array();
      if (!nodes.is_array()) continue;
      for (const json& node : nodes)
        for (const Operand& o : nodeOperands(node, file_, "layer '" + objectName(l) + "'")) see(o.tensor);
    }
    const json outs = config.is_object() ? config.value("output_layers", json::array()) : json::array();
    if (outs.is_array() && !outs.empty())
      for (const json& o : outs[0].is_array() ? outs : json::array({outs})) see(historyRef(o, file_, "config.output_layers"));
    return highest == calls ? 1 : 0;
  }

  // The name of call `node` of `layer` in nested call `call`.
  static std::string suffixed(const std::string& layer, std::int64_t node, std::int64_t call) {
    return layer + (node ? "@" + std::to_string(node) : "") + (call ? "@" + std::to_string(call) : "");
  }

  std::string resolve(const Scope& scope, const Ref& r, const std::string& where) const {
    const auto it = scope.find({r.layer, r.node});
    if (it != scope.end()) return it->second;
    if (r.node > 0 && scope.count({r.layer, 0})) {  // every call of a layer is read at once
      std::int64_t calls = 0;
      while (scope.count({r.layer, calls})) ++calls;
      graphFail(file_, where, "inbound_nodes: reads [\"" + r.layer + "\", " + std::to_string(r.node) + ", 0], call " +
                                  std::to_string(r.node) + " of layer '" + r.layer + "', which is called " +
                                  std::to_string(calls) + (calls == 1 ? " time" : " times"));
    }
    // Not (yet) known: a later layer of the config, or a name that is none;
    // layer_graph.cpp reports an unknown name, naming the key.
    return suffixed(r.layer, r.node, 0);
  }

  static bool isTfOpNode(const json& l, const std::string& cls) {
    // (Keras 3 writes "module": null for a custom layer.)
    const std::string module = l.contains("module") && l.at("module").is_string() ? l.at("module").get<std::string>() : "";
    return cls == "TFOpLambda" || cls == "TensorFlowOpLayer" || module.rfind("keras.src.ops", 0) == 0 ||
           module.rfind("keras.ops", 0) == 0;
  }

  // A TF op node as the merge or Rescaling layer it computes.
  KerasCall tfOpCall(const std::string& cls, const json& config, std::vector<Operand> operands,
                     const std::string& name, const std::string& where, const Scope& scope) {
    std::string op = cls;
    if (cls == "TFOpLambda") op = config.value("function", "");
    if (cls == "TensorFlowOpLayer") {
      const json nodeDef = config.value("node_def", json::object());
      op = nodeDef.is_object() ? nodeDef.value("op", "") : "";
      // constants: {"1": 2.0}: operand 1 is that constant, the tensors fill the others.
      const json constants = config.value("constants", json::object());
      if (constants.is_object() && !constants.empty()) {
        std::vector<Operand> all;
        std::size_t t = 0;
        for (std::size_t i = 0; i < operands.size() + constants.size(); ++i) {
          const std::string key = std::to_string(i);
          if (constants.contains(key)) {
            if (!constants[key].is_number()) graphFail(file_, where, "constants." + key + ": expected a number, got " + constants[key].dump());
            all.push_back({std::nullopt, constants[key].get<double>()});
          } else if (t < operands.size()) {
            all.push_back(operands[t++]);
          }
        }
        operands = all;
      }
    }
    const std::optional<TfOp> kind = tfOpNamed(op);
    if (!kind) graphFail(file_, where, "TF op '" + op + "' is not an elementwise merge or scaling (" + kTfOpsModelled + ")");
    std::vector<std::string> tensors;
    std::vector<double> constants;
    for (const Operand& o : operands) {
      if (o.tensor) tensors.push_back(resolve(scope, *o.tensor, where));
      else constants.push_back(o.constant);
    }
    const bool negate = *kind == TfOp::Negate;
    if (negate ? tensors.size() != 1 || !constants.empty() : operands.size() != 2 || tensors.empty())
      graphFail(file_, where, "TF op '" + op + "': expected " + (negate ? "one tensor" : "two operands, a tensor and a tensor or a number") +
                             ", got " + std::to_string(tensors.size()) + " tensors and " + std::to_string(constants.size()) + " numbers");
    auto made = std::make_unique<json>(json{{"name", name}});
    std::string madeClass;
    if (tensors.size() == 2) {
      if (*kind == TfOp::Divide) graphFail(file_, where, "TF op '" + op + "': the quotient of two tensors is not modelled");
      madeClass = *kind == TfOp::Add ? "Add" : *kind == TfOp::Subtract ? "Subtract" : "Multiply";
    } else {
      // y = x * scale + offset (Keras's Rescaling).
      const bool constantFirst = !operands[0].tensor;
      const double c = negate ? 0 : constants[0];
      double scale = 1, offset = 0;
      switch (*kind) {
        case TfOp::Add: offset = c; break;
        case TfOp::Subtract: constantFirst ? (scale = -1, offset = c) : (offset = -c); break;
        case TfOp::Multiply: scale = c; break;
        case TfOp::Divide:
          if (constantFirst) graphFail(file_, where, "TF op '" + op + "': a number divided by a tensor is not modelled");
          if (c == 0) graphFail(file_, where, "TF op '" + op + "': a division by 0");
          scale = 1 / c;
          break;
        case TfOp::Negate: scale = -1; break;
      }
      madeClass = "Rescaling";
      (*made)["scale"] = scale;
      (*made)["offset"] = offset;
    }
    g_.madeConfigs.push_back(std::move(made));
    return KerasCall{madeClass, name, "", g_.madeConfigs.back().get(), tensors, where};
  }

  const std::string& file_;
  KerasGraph& g_;
  bool frozen_ = false;      // inlining a nested model set not trainable
  bool adoptInput_ = false;  // the next nested InputLayer is the top model's input (see inlineModel)
};

}  // namespace

bool isKerasModelClass(const std::string& cls) { return cls == "Sequential" || cls == "Functional" || cls == "Model"; }

KerasGraph flattenKerasModel(const json& model, const std::string& file) {
  KerasGraph g;
  Flattener f(file, g);
  g.outputs = f.inlineModel(model, "", 0);
  return g;
}

}  // namespace ipusim::scheduler
