#include "scheduler/models/workload_parts.hpp"

#include "scheduler/models/layer_graph.hpp"
#include "scheduler/layers/layer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ipusim::scheduler {
namespace {

using Reader = WorkloadReader;
using nlohmann::json;

// One layer of ipusim's own list: the keys every kind has (type, name,
// shard, stage; inputs are read by parseLayers), then the kind's own
// (Layer::workloadKeys, readWorkload). `counts` numbers each kind for
// Keras-style default names.
LayerSpec parseLayer(const Reader& l, std::map<std::string, int>& counts) {
  std::set<std::string> kinds(layerKinds().begin(), layerKinds().end());
  LayerSpec spec;
  if (!l.has("type")) {
    std::string list;
    for (const auto& kind : layerKinds()) list += (list.empty() ? "" : " | ") + kind;
    l.fail(l.key("type"), "missing (expected " + list + ")");
  }
  spec.kind = l.string("type", "", kinds);
  const int n = counts[spec.kind]++;
  spec.name = l.string("name", n ? spec.kind + "_" + std::to_string(n) : spec.kind);
  const Layer& layer = layerOfKind(spec.kind);
  std::set<std::string> keys = layer.workloadKeys(spec.kind);
  keys.insert({"type", "name", "shard", "stage", "inputs", "trainable"});
  const std::vector<std::string> penalties = regularizerKeys(spec.kind);
  keys.insert(penalties.begin(), penalties.end());
  l.allowOnly(keys);
  layer.readWorkload(l, spec);
  if (!l.boolean("trainable", true)) spec.freeze();  // as Keras's trainable: false
  // Regularizers, by the rules a Keras file's follow (models/regularizer.hpp).
  for (const std::string& key : penalties) {
    RegularizerSpec r;
    if (l.has(key) && readRegularizer(l.raw().at(key), r, [&](const std::string& what) { l.fail(l.key(key), what); }))
      spec.regularizers[regularizedWeight(key, spec.kind)] = r;
  }
  spec.shard = l.count32("shard", 0, false);
  if (l.has("stage")) spec.stage = l.count32("stage", 0, false);
  return spec;
}

// Another call of an earlier layer ("shares": its name): that layer's kind,
// configuration and weights; its own name, inputs, shard and stage.
LayerSpec parseSharedCall(const Reader& l, const std::vector<LayerSpec>& earlier) {
  l.allowOnly({"shares", "name", "inputs", "shard", "stage"});
  const std::string shared = l.string("shares", "");
  const auto it = std::find_if(earlier.begin(), earlier.end(), [&](const LayerSpec& s) { return s.name == shared; });
  if (it == earlier.end()) l.fail(l.key("shares"), "'" + shared + "' names no earlier layer (a shared layer's first call comes first)");
  LayerSpec spec = *it;
  spec.weightsOf = it->weightsOwner();
  if (!l.has("name")) l.fail(l.key("name"), "missing (another call of a layer needs a name of its own)");
  spec.name = l.string("name", "");
  spec.shard = l.count32("shard", 0, false);
  spec.stage.reset();
  if (l.has("stage")) spec.stage = l.count32("stage", 0, false);
  return spec;
}

// model.inputs: two or more {"name", "shape"} (one input's shape is dataset.input_shape).
std::vector<ModelInput> parseInputs(const Reader& model) {
  const json& list = model.raw().at("inputs");
  if (!list.is_array() || list.size() < 2)
    model.fail("model.inputs", "expected an array of two or more {\"name\", \"shape\"} (a model with one input "
                               "takes its shape from dataset.input_shape)");
  if (list.size() > kMaxModelInputs)
    model.fail("model.inputs", std::to_string(list.size()) + " inputs (at most " + std::to_string(kMaxModelInputs) + ")");
  std::vector<ModelInput> inputs;
  std::set<std::string> names;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const Reader in(list[k], model.source(), "model.inputs[" + std::to_string(k) + "]");
    if (!list[k].is_object()) in.fail(in.key(""), "expected {\"name\", \"shape\"}");
    in.allowOnly({"name", "shape"});
    if (!in.has("name")) in.fail(in.key("name"), "missing");
    if (!in.has("shape")) in.fail(in.key("shape"), "missing (the input's per-example shape, channels last)");
    ModelInput input{in.string("name", ""), {}};
    if (input.name.empty()) in.fail(in.key("name"), "expected a non-empty name");
    if (!names.insert(input.name).second) in.fail(in.key("name"), "'" + input.name + "' names two inputs");
    for (std::int64_t v : in.integers("shape")) {
      if (v <= 0) in.fail(in.key("shape"), "expected positive sizes");
      input.shape.push_back(std::uint64_t(v));
    }
    inputs.push_back(std::move(input));
  }
  return inputs;
}

}  // namespace

LayerList parseLayers(const Reader& model) {
  if (!model.has("layers") || !model.raw().at("layers").is_array() || model.raw().at("layers").empty())
    model.fail("model.layers", "expected a non-empty array of layers");
  LayerList parsed;
  std::vector<LayerSpec>& layers = parsed.layers;
  LayerConnections connections;
  connections.outputKey = "model.outputs";
  if (model.has("inputs")) {
    parsed.inputs = parseInputs(model);
    connections.modelInputs.clear();
    for (const ModelInput& input : parsed.inputs) connections.modelInputs.push_back(input.name);
  }
  if (model.has("outputs")) connections.outputs = model.strings("outputs");
  std::map<std::string, int> counts;
  const json& arr = model.raw().at("layers");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const Reader layer(arr[i], model.source(), "model.layers[" + std::to_string(i) + "]");
    layers.push_back(layer.has("shares") ? parseSharedCall(layer, layers) : parseLayer(layer, counts));
    connections.inputs.push_back(layer.has("inputs") ? layer.strings("inputs") : std::vector<std::string>{});
  }
  parsed.outputs = connectLayers(layers, connections, model.source(), [](std::size_t i, const std::string& key) {
    return "model.layers[" + std::to_string(i) + "]" + (key.empty() ? "" : "." + key);
  });
  if (parsed.outputs.size() < 2) parsed.outputs.clear();
  return parsed;
}

namespace {

// The workload's `optimizer` object as readOptimizerOptions() reads it.
class WorkloadOptions final : public OptionSource {
 public:
  explicit WorkloadOptions(const Reader& r) : r_(r) {}
  const json* find(const std::string& key) override { return r_.has(key) ? &r_.raw().at(key) : nullptr; }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const override { r_.fail(r_.key(key), what); }

 private:
  const Reader& r_;
};

}  // namespace

// Keras's optimizers, keys and defaults (optimizer_spec.hpp).
OptimizerSpec parseOptimizer(const Reader& opt) {
  const std::string type = opt.string("type", "sgd", optimizerTypes());
  std::set<std::string> keys = optimizerKeys(type);
  keys.insert("type");
  opt.allowOnly(keys);
  WorkloadOptions source(opt);
  return readOptimizerOptions(type, source);
}

namespace {
const std::set<std::string> kLossTypes{"sparse_categorical_crossentropy", "categorical_crossentropy",
                                       "binary_crossentropy", "mean_squared_error", "mean_absolute_error", "huber",
                                       "kl_divergence"};

}  // namespace

void checkLossKeys(const LossSpec& loss, const std::function<bool(const std::string&)>& given,
                   const std::function<void(const std::string&, const std::string&)>& fail) {
  const bool crossEntropy = loss.type == "categorical_crossentropy" || loss.type == "binary_crossentropy";
  if (loss.onPredictions() && given("from_logits")) fail("from_logits", loss.type + " has no from_logits");
  if (!crossEntropy && given("label_smoothing"))
    fail("label_smoothing", loss.type + " has no label smoothing (categorical_crossentropy and binary_crossentropy have)");
  if (!(loss.labelSmoothing >= 0 && loss.labelSmoothing <= 1)) fail("label_smoothing", "expected a number in [0, 1]");
  if (loss.type != "huber" && given("delta")) fail("delta", loss.type + " has no delta (huber has)");
  if (!(loss.delta > 0) || !std::isfinite(loss.delta)) fail("delta", "expected a positive number");
}

// "loss": "name" or {"type": "name", "from_logits": bool, "label_smoothing", "delta"}.
LossSpec parseLoss(const Reader& top) {
  LossSpec loss;
  if (!top.has("loss")) return loss;
  if (top.raw().at("loss").is_string()) {
    loss.type = top.string("loss", loss.type, kLossTypes);
    return loss;
  }
  const Reader l = top.object("loss");
  l.allowOnly({"type", "from_logits", "label_smoothing", "delta"});
  loss.type = l.string("type", loss.type, kLossTypes);
  loss.fromLogits = l.boolean("from_logits", false);
  loss.labelSmoothing = l.number("label_smoothing", loss.labelSmoothing);
  loss.delta = l.number("delta", loss.delta);
  checkLossKeys(
      loss, [&](const std::string& key) { return l.has(key); },
      [&](const std::string& key, const std::string& what) { l.fail(l.key(key), what); });
  return loss;
}

}  // namespace ipusim::scheduler
