#include "scheduler/workload_parts.hpp"

#include "scheduler/layer_graph.hpp"
#include "scheduler/padding_layers.hpp"

#include <map>
#include <set>

namespace ipusim::scheduler {
namespace {

using Reader = WorkloadReader;
using nlohmann::json;

// One layer of ipusim's own list; `counts` numbers each kind for Keras-style default names.
LayerSpec parseLayer(const Reader& l, std::map<std::string, int>& counts) {
  namespace k = layer_kind;
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
  auto activation = [&](bool required) {
    if (required && !l.has("activation")) l.fail(l.key("activation"), "missing (expected " + activationNames() + ")");
    const std::string name = l.string("activation", "linear");
    if (!parseActivation(name, spec.activation))
      l.fail(l.key("activation"), "'" + name + "' is not one of " + activationNames());
  };
  auto window = [&](const char* key, bool stridesDefaultToWindow) {
    if (!l.has(key)) l.fail(l.key(key), "missing (expected a positive integer or [rows, columns])");
    spec.window = l.pair(key, spec.window);
    spec.strides = l.pair("strides", stridesDefaultToWindow ? spec.window : spec.strides);
    spec.padding = l.string("padding", spec.padding, {"valid", "same"});
  };
  if (spec.kind == k::kFlatten) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs"});
  } else if (spec.kind == k::kReshape) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs", "target_shape"});
    spec.targetShape = l.integers("target_shape");
  } else if (spec.kind == k::kDense) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs", "units", "activation", "use_bias"});
    if (!l.has("units")) l.fail(l.key("units"), "missing (expected a positive integer)");
    spec.units = l.count32("units", 0, true);
    activation(false);
    spec.useBias = l.boolean("use_bias", true);
  } else if (spec.kind == k::kDropout) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs", "rate", "seed"});
    if (!l.has("rate")) l.fail(l.key("rate"), "missing (expected a number in [0, 1))");
    spec.rate = l.numberIn("rate", 0, 0, 1, true);
    spec.seeded = l.has("seed");
    spec.seed = l.count("seed", 0, false);
  } else if (spec.kind == k::kBatchNormalization) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs", "momentum", "epsilon", "center", "scale"});
    spec.momentum = l.numberIn("momentum", spec.momentum, 0, 1, false);
    spec.epsilon = l.number("epsilon", spec.epsilon);
    if (!(spec.epsilon > 0)) l.fail(l.key("epsilon"), "expected a positive number");
    spec.center = l.boolean("center", true);
    spec.scale = l.boolean("scale", true);
  } else if (spec.kind == k::kActivation) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs", "activation"});
    activation(true);
  } else if (spec.kind == k::kConv2D) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs", "filters", "kernel_size", "strides", "padding", "use_bias", "activation"});
    if (!l.has("filters")) l.fail(l.key("filters"), "missing (expected a positive integer)");
    spec.units = l.count32("filters", 0, true);
    window("kernel_size", false);
    spec.useBias = l.boolean("use_bias", true);
    activation(false);
  } else if (spec.kind == k::kGlobalAveragePooling2D || spec.kind == k::kGlobalMaxPooling2D) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs", "keepdims"});
    spec.keepDims = l.boolean("keepdims", false);
  } else if (spec.kind == k::kConcatenate) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs", "axis"});
    if (l.has("axis") && !l.raw().at("axis").is_number_integer())
      l.fail(l.key("axis"), "expected an integer (Keras's count: 1 the first axis after the batch, -1 the last)");
    spec.axis = l.has("axis") ? l.raw().at("axis").get<std::int64_t>() : -1;
  } else if (isMerge(spec.kind)) {
    l.allowOnly({"type", "name", "shard", "stage", "inputs"});
  } else if (spec.kind == k::kZeroPadding1D || spec.kind == k::kZeroPadding2D || spec.kind == k::kCropping1D ||
             spec.kind == k::kCropping2D) {
    const bool crop = spec.kind == k::kCropping1D || spec.kind == k::kCropping2D;
    const bool two = spec.kind == k::kZeroPadding2D || spec.kind == k::kCropping2D;
    const char* key = crop ? "cropping" : "padding";
    l.allowOnly({"type", "name", "shard", "stage", "inputs", key});
    // Keras's defaults: padding 1 on each side; no cropping.
    const auto pads = l.has(key) ? padsFromJson(l.raw().at(key), two)
                                 : std::optional(crop ? std::array<std::uint32_t, 4>{0, 0, 0, 0}
                                                      : std::array<std::uint32_t, 4>{two, two, 1, 1});
    if (!pads) l.fail(l.key(key), std::string("expected ") + padsForms(two) + ", got " + l.raw().at(key).dump());
    spec.pads = *pads;
  } else {  // pooling: strides default to pool_size, as Keras's
    l.allowOnly({"type", "name", "shard", "stage", "inputs", "pool_size", "strides", "padding"});
    window("pool_size", true);
  }
  spec.shard = l.count32("shard", 0, false);
  if (l.has("stage")) spec.stage = l.count32("stage", 0, false);
  return spec;
}

}  // namespace

std::vector<LayerSpec> parseLayers(const Reader& model) {
  if (!model.has("layers") || !model.raw().at("layers").is_array() || model.raw().at("layers").empty())
    model.fail("model.layers", "expected a non-empty array of layers");
  std::vector<LayerSpec> layers;
  LayerConnections connections;
  std::map<std::string, int> counts;
  const json& arr = model.raw().at("layers");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const Reader layer(arr[i], model.source(), "model.layers[" + std::to_string(i) + "]");
    layers.push_back(parseLayer(layer, counts));
    connections.inputs.push_back(layer.has("inputs") ? layer.strings("inputs") : std::vector<std::string>{});
  }
  connectLayers(layers, connections, model.source(), [](std::size_t i, const std::string& key) {
    return "model.layers[" + std::to_string(i) + "]" + (key.empty() ? "" : "." + key);
  });
  return layers;
}

// Keras's defaults per optimizer (keras.optimizers.SGD / Adam / RMSprop).
OptimizerSpec parseOptimizer(const Reader& opt) {
  OptimizerSpec o;
  o.type = opt.string("type", o.type, {"sgd", "adam", "rmsprop"});
  if (o.type == "sgd") {
    opt.allowOnly({"type", "learning_rate", "momentum", "nesterov"});
    o.momentum = opt.numberIn("momentum", 0.0, 0, 1, false);
    o.nesterov = opt.boolean("nesterov", false);
  } else if (o.type == "adam") {
    opt.allowOnly({"type", "learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad"});
    o.learningRate = 0.001;
    o.beta1 = opt.numberIn("beta_1", o.beta1, 0, 1, true);
    o.beta2 = opt.numberIn("beta_2", o.beta2, 0, 1, true);
    o.epsilon = opt.number("epsilon", o.epsilon);
    if (opt.boolean("amsgrad", false)) opt.fail(opt.key("amsgrad"), "true is not modelled (only amsgrad=false)");
  } else {
    opt.allowOnly({"type", "learning_rate", "rho", "momentum", "epsilon", "centered"});
    o.learningRate = 0.001;
    o.rho = opt.numberIn("rho", o.rho, 0, 1, true);
    o.momentum = opt.numberIn("momentum", 0.0, 0, 1, false);
    o.epsilon = opt.number("epsilon", o.epsilon);
    o.centered = opt.boolean("centered", false);
  }
  if (!(o.epsilon > 0)) opt.fail(opt.key("epsilon"), "expected a positive number");
  o.learningRate = opt.number("learning_rate", o.learningRate);
  if (!(o.learningRate > 0)) opt.fail(opt.key("learning_rate"), "expected a positive number");
  return o;
}

namespace {
const std::set<std::string> kLossTypes{"sparse_categorical_crossentropy", "categorical_crossentropy",
                                       "binary_crossentropy", "mean_squared_error"};

}  // namespace

// "loss": "name" or {"type": "name", "from_logits": bool}.
LossSpec parseLoss(const Reader& top) {
  LossSpec loss;
  if (!top.has("loss")) return loss;
  if (top.raw().at("loss").is_string()) {
    loss.type = top.string("loss", loss.type, kLossTypes);
    return loss;
  }
  const Reader l = top.object("loss");
  l.allowOnly({"type", "from_logits"});
  loss.type = l.string("type", loss.type, kLossTypes);
  loss.fromLogits = l.boolean("from_logits", false);
  if (loss.type == "mean_squared_error" && l.has("from_logits"))
    l.fail(l.key("from_logits"), "mean_squared_error has no from_logits");
  return loss;
}

}  // namespace ipusim::scheduler
