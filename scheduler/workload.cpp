#include "scheduler/workload.hpp"

#include "model/util/input_file.hpp"
#include "model/util/json_error_text.hpp"
#include "scheduler/keras_model.hpp"
#include "scheduler/layer_shapes.hpp"
#include "scheduler/model_checks.hpp"
#include "scheduler/workload_limits.hpp"
#include "scheduler/workload_reader.hpp"

#include <limits>
#include <map>
#include <optional>
#include <unistd.h>
#include <set>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

// A workload is a few hundred bytes of JSON (design choice: 16 MiB is room for
// any hand-written file, and refuses a mistaken path to a large file at once).
constexpr std::uint64_t kMaxWorkloadFileBytes = 16ull << 20;

using nlohmann::json;

using Reader = WorkloadReader;

void requireFile(const Reader& r, const std::string& keyPath, const std::string& file) {
  try {
    // A regular file (not a FIFO, a directory, a device), checked without reading it.
    ::close(util::openRegularInputFile(file, "dataset file", std::numeric_limits<std::uint64_t>::max()));
  } catch (const std::invalid_argument& e) {
    r.fail(keyPath, e.what());
  }
}

DatasetSpec parseDataset(const Reader& r) {
  r.allowOnly({"format", "images", "labels", "batch_size", "shuffle_seed", "features", "input_shape", "classes",
               "examples"});
  DatasetSpec d;
  d.format = r.string("format", d.format, {"idx", "synthetic"});
  d.images = r.string("images", d.images);
  d.labels = r.string("labels", d.labels);
  d.batchSize = r.count32("batch_size", d.batchSize, true);
  d.shuffleSeed = r.count("shuffle_seed", d.shuffleSeed, false);
  d.features = r.count32("features", d.features, true);
  d.classes = r.count32("classes", d.classes, true);
  d.syntheticExamples = r.count("examples", d.syntheticExamples, true);
  if (d.format == "idx") {
    requireFile(r, r.key("images"), d.images);
    requireFile(r, r.key("labels"), d.labels);
  } else if (d.syntheticExamples < d.batchSize) {
    r.fail(r.key("examples"), "must be at least batch_size (" + std::to_string(d.batchSize) + ")");
  }
  return d;
}

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
    l.allowOnly({"type", "name"});
  } else if (spec.kind == k::kReshape) {
    l.allowOnly({"type", "name", "target_shape"});
    spec.targetShape = l.integers("target_shape");
  } else if (spec.kind == k::kDense) {
    l.allowOnly({"type", "name", "units", "activation", "use_bias"});
    if (!l.has("units")) l.fail(l.key("units"), "missing (expected a positive integer)");
    spec.units = l.count32("units", 0, true);
    activation(false);
    spec.useBias = l.boolean("use_bias", true);
  } else if (spec.kind == k::kDropout) {
    l.allowOnly({"type", "name", "rate", "seed"});
    if (!l.has("rate")) l.fail(l.key("rate"), "missing (expected a number in [0, 1))");
    spec.rate = l.numberIn("rate", 0, 0, 1, true);
    spec.seeded = l.has("seed");
    spec.seed = l.count("seed", 0, false);
  } else if (spec.kind == k::kBatchNormalization) {
    l.allowOnly({"type", "name", "momentum", "epsilon", "center", "scale"});
    spec.momentum = l.numberIn("momentum", spec.momentum, 0, 1, false);
    spec.epsilon = l.number("epsilon", spec.epsilon);
    if (!(spec.epsilon > 0)) l.fail(l.key("epsilon"), "expected a positive number");
    spec.center = l.boolean("center", true);
    spec.scale = l.boolean("scale", true);
  } else if (spec.kind == k::kActivation) {
    l.allowOnly({"type", "name", "activation"});
    activation(true);
  } else if (spec.kind == k::kConv2D) {
    l.allowOnly({"type", "name", "filters", "kernel_size", "strides", "padding", "use_bias", "activation"});
    if (!l.has("filters")) l.fail(l.key("filters"), "missing (expected a positive integer)");
    spec.units = l.count32("filters", 0, true);
    window("kernel_size", false);
    spec.useBias = l.boolean("use_bias", true);
    activation(false);
  } else {  // pooling: strides default to pool_size, as Keras's
    l.allowOnly({"type", "name", "pool_size", "strides", "padding"});
    window("pool_size", true);
  }
  return spec;
}

std::vector<LayerSpec> parseLayers(const Reader& model) {
  if (!model.has("layers") || !model.raw().at("layers").is_array() || model.raw().at("layers").empty())
    model.fail("model.layers", "expected a non-empty array of layers");
  std::vector<LayerSpec> layers;
  std::map<std::string, int> counts;
  const json& arr = model.raw().at("layers");
  for (std::size_t i = 0; i < arr.size(); ++i)
    layers.push_back(parseLayer(Reader(arr[i], model.source(), "model.layers[" + std::to_string(i) + "]"), counts));
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

const std::set<std::string> kLossTypes{"sparse_categorical_crossentropy", "categorical_crossentropy",
                                       "binary_crossentropy", "mean_squared_error"};

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

}  // namespace

Workload parseWorkload(const json& j, const std::string& source, const std::string& baseDirectory) {
  Reader top(j, source, "");
  top.allowOnly({"name", "dataset", "model", "loss", "optimizer", "training", "ipu", "compile", "seed"});
  Workload w;
  w.name = top.string("name", source);
  const Reader dataset = top.object("dataset");
  w.dataset = parseDataset(dataset);
  w.seed = top.count("seed", w.seed, false);

  if (!top.has("model")) top.fail("model", "missing (expected {\"layers\": [...]} or {\"keras\": \"model.json\"})");
  const Reader model = top.object("model");
  model.allowOnly({"layers", "dtype", "keras"});
  std::optional<KerasModel> keras;
  if (model.has("keras")) {
    if (model.has("layers")) model.fail("model.layers", "give either model.layers or model.keras, not both");
    const std::string file = model.string("keras", "");
    w.kerasModel = file.empty() || file[0] == '/' || baseDirectory.empty() ? file : baseDirectory + "/" + file;
    try {
      keras = loadKerasModel(w.kerasModel);
    } catch (const std::invalid_argument& e) {
      model.fail("model.keras", e.what());
    }
    w.layers = keras->layers;
    w.dtype = keras->dtype;
  } else {
    w.layers = parseLayers(model);
  }
  // Keras's dtype policy names: float32 variables and compute; float16 both;
  // mixed_float16 float32 variables and float16 compute.
  w.dtype = model.string("dtype", w.dtype, {"float32", "float16", "mixed_float16"});

  // The input shape: the Keras model's, or dataset.input_shape, or {features}.
  DatasetSpec& d = w.dataset;
  if (dataset.has("input_shape")) {
    for (std::int64_t v : dataset.integers("input_shape")) {
      if (v <= 0) dataset.fail(dataset.key("input_shape"), "expected positive sizes");
      d.inputShape.push_back(std::uint64_t(v));
    }
    if (dataset.has("features") && elementsOf(d.inputShape) != d.features)
      dataset.fail(dataset.key("features"), std::to_string(d.features) + " differs from input_shape " +
                                                shapeText(d.inputShape) + " (" + std::to_string(elementsOf(d.inputShape)) + ")");
  }
  if (keras) {
    if (!d.inputShape.empty() && d.inputShape != keras->inputShape)
      dataset.fail(dataset.key("input_shape"), shapeText(d.inputShape) + " differs from the Keras model's input " +
                                                   shapeText(keras->inputShape));
    if (dataset.has("features") && !dataset.has("input_shape") && elementsOf(keras->inputShape) != d.features)
      dataset.fail(dataset.key("features"), std::to_string(d.features) + " differs from the Keras model's input " +
                                                shapeText(keras->inputShape));
    d.inputShape = keras->inputShape;
    if (keras->batchSize && !dataset.has("batch_size")) d.batchSize = keras->batchSize;  // the model fixes its batch
    if (keras->batchSize && d.batchSize != keras->batchSize)
      dataset.fail(dataset.key("batch_size"), std::to_string(d.batchSize) + " differs from the Keras model's fixed batch size " +
                                                  std::to_string(keras->batchSize));
  }
  if (d.inputShape.empty()) d.inputShape = {d.features};
  if (elementsOf(d.inputShape) > 0xffffffffull) dataset.fail(dataset.key("input_shape"), "too many elements per example");
  d.features = std::uint32_t(elementsOf(d.inputShape));
  inferLayerShapes(w.layers, d.inputShape, keras ? w.kerasModel : source,
                   [&](std::size_t i, const std::string& key) {
                     if (keras) return "layer '" + w.layers[i].name + "'" + (key.empty() ? "" : ": " + key);
                     return "model.layers[" + std::to_string(i) + "]" + (key.empty() ? "" : "." + key);
                   });

  // The loss and optimizer: the workload's, else the Keras compile_config's, else the defaults.
  if (top.has("loss") || !keras || !keras->loss) w.loss = parseLoss(top);
  else w.loss = *keras->loss;
  if (top.has("optimizer") || !keras || !keras->optimizer) w.optimizer = parseOptimizer(top.object("optimizer"));
  else w.optimizer = *keras->optimizer;
  const bool ce = w.loss.type == "sparse_categorical_crossentropy" || w.loss.type == "categorical_crossentropy";
  if (ce && keras && !dataset.has("classes") && w.layers.back().outputShape.size() == 1 &&
      w.layers.back().outputShape[0] <= 0xffffffffull)
    d.classes = std::uint32_t(w.layers.back().outputShape[0]);
  checkModelAgainstLoss(w, keras ? w.kerasModel : source, keras ? "the Keras model" : "model.layers");

  Reader tr = top.object("training");
  tr.allowOnly({"steps", "steps_per_execution", "feeds", "infeed", "outfeed"});
  w.training.steps = tr.count("steps", w.training.steps, true);
  if (keras && keras->stepsPerExecution && !tr.has("steps_per_execution"))
    w.training.stepsPerExecution = keras->stepsPerExecution;
  w.training.stepsPerExecution = tr.count32("steps_per_execution", w.training.stepsPerExecution, true);
  w.training.feeds = tr.boolean("feeds", w.training.feeds);
  Reader in = tr.object("infeed");
  in.allowOnly({"prefetch_depth"});
  w.training.prefetchDepth = in.count32("prefetch_depth", w.training.prefetchDepth, true);
  Reader out = tr.object("outfeed");
  out.allowOnly({"mode", "buffer_depth"});
  w.training.outfeedMode = out.string("mode", w.training.outfeedMode, {"ALL", "LAST"});
  w.training.outfeedBufferDepth = out.count32("buffer_depth", w.training.outfeedBufferDepth, true);
  if (!w.training.feeds) w.training.stepsPerExecution = 1;  // one step per Engine::run
  if (w.training.steps % w.training.stepsPerExecution)
    tr.fail("training.steps", "must be a multiple of steps_per_execution (" +
                                  std::to_string(w.training.stepsPerExecution) + ")");

  Reader ipu = top.object("ipu");
  ipu.allowOnly({"arch", "tiles", "available_memory_proportion"});
  w.ipu.arch = ipu.string("arch", w.ipu.arch, {"ipu1", "ipu2"});
  w.ipu.tiles = ipu.count32("tiles", 0, false);
  w.ipu.availableMemoryProportion = ipu.number("available_memory_proportion", w.ipu.availableMemoryProportion);
  if (!(w.ipu.availableMemoryProportion > 0 && w.ipu.availableMemoryProportion <= 1))
    ipu.fail("ipu.available_memory_proportion", "expected a number in (0, 1]");

  Reader comp = top.object("compile");
  comp.allowOnly({"scheduling", "allow_out_of_memory"});
  w.scheduling = comp.string("scheduling", w.scheduling,
                             {"post_order", "look_ahead", "shortest_path", "clustering", "choose_best"});
  w.allowOutOfMemory = comp.boolean("allow_out_of_memory", w.allowOutOfMemory);
  checkWorkloadLimits(w, source);
  return w;
}

Workload loadWorkload(const std::string& path) {
  const std::string text = util::readInputFile(path, "workload file", kMaxWorkloadFileBytes);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // a syntax error, or a number out of range
    throw std::invalid_argument(path + ": not valid JSON: " + util::jsonErrorText(e.what()));
  }
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  const auto slash = path.find_last_of('/');
  Workload w = parseWorkload(j, path, slash == std::string::npos ? "" : path.substr(0, slash));
  if (!j.contains("name")) w.name = stem;
  return w;
}

}  // namespace ipusim::scheduler
