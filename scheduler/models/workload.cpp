#include "scheduler/models/workload.hpp"

#include "scheduler/models/token_inputs.hpp"
#include "scheduler/models/auto_checkpoints.hpp"

#include <algorithm>

#include "model/util/input_file.hpp"
#include "model/util/json_nesting.hpp"
#include "model/util/json_unique_keys.hpp"
#include "model/util/json_error_text.hpp"
#include "model/util/nearest_name.hpp"
#include "scheduler/models/dtype_policy.hpp"
#include "scheduler/models/ipu_system_keys.hpp"
#include "scheduler/models/keras_placement.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/layer_shapes.hpp"
#include "scheduler/models/metric_spec.hpp"
#include "scheduler/models/model_checks.hpp"
#include "scheduler/multi_ipu/pipeline_spec.hpp"
#include "scheduler/models/workload_limits.hpp"
#include "scheduler/models/workload_parts.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <limits>
#include <map>
#include <optional>
#include <unistd.h>
#include <set>
#include <stdexcept>
#include <vector>

namespace ipusim::scheduler {
namespace {

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

// A path as the workload gives it, relative to the workload file's folder
// (as model.keras is), unless absolute or the workload has no file.
std::string besideWorkload(const std::string& path, const std::string& baseDirectory) {
  return path.empty() || path[0] == '/' || baseDirectory.empty() ? path : baseDirectory + "/" + path;
}

DatasetSpec parseDataset(const Reader& r, const std::string& baseDirectory) {
  r.allowOnly({"format", "images", "labels", "batch_size", "shuffle_seed", "features", "input_shape", "classes",
               "examples", "preprocessing"});
  DatasetSpec d;
  d.format = r.string("format", d.format, {"idx", "synthetic", "npy"});
  d.images = besideWorkload(r.string("images", d.images), baseDirectory);
  d.labels = besideWorkload(r.string("labels", d.labels), baseDirectory);
  d.batchSize = r.count32("batch_size", d.batchSize, true);
  d.shuffleSeed = r.count("shuffle_seed", d.shuffleSeed, false);
  d.features = r.count32("features", d.features, true);
  d.classes = r.count32("classes", d.classes, true);
  d.syntheticExamples = r.count("examples", d.syntheticExamples, true);
  d.preprocessing = r.string("preprocessing", d.preprocessing, {"divide_by_255", "none"});
  if (d.format == "idx" || d.format == "npy") {
    if (d.format == "npy" && (!r.has("images") || !r.has("labels")))
      r.fail(r.key(r.has("images") ? "labels" : "images"), "missing: format 'npy' reads token ids (images) and labels "
                                                            "from .npy files (numpy.save)");
    requireFile(r, r.key("images"), d.images);
    requireFile(r, r.key("labels"), d.labels);
  } else if (d.syntheticExamples < d.batchSize) {
    r.fail(r.key("examples"), "must be at least batch_size (" + std::to_string(d.batchSize) + ")");
  }
  return d;
}

// training.steps_per_epoch and training.validation (ValidationSpec).
void parseValidation(const Reader& tr, Workload& w, const std::string& baseDirectory) {
  TrainingSpec& t = w.training;
  t.stepsPerEpoch = tr.count("steps_per_epoch", 0, true);
  const std::uint64_t perExecution = t.feeds ? t.stepsPerExecution : 1;
  // Epochs and validations are fit's: evaluate and predict ignore them, so
  // their step counts are checked for fit alone (`ipusim evaluate` of
  // mnist_with_validation.json --steps 100 was refused for its epochs).
  const bool fit = w.task == Task::Fit;
  if (fit && t.stepsPerEpoch && (t.stepsPerEpoch % perExecution || t.steps % t.stepsPerEpoch))
    tr.fail(tr.key("steps_per_epoch"), std::to_string(t.stepsPerEpoch) + " must be a multiple of steps_per_execution (" +
                                           std::to_string(perExecution) + ") dividing training.steps (" +
                                           std::to_string(t.steps) + "): an epoch is whole executions");
  if (!tr.has("validation")) return;
  const Reader v = tr.object("validation");
  v.allowOnly({"steps", "freq", "images", "labels"});
  if (!v.has("steps")) v.fail(v.key("steps"), "missing: the batches each validation runs (Keras's validation_steps)");
  ValidationSpec& val = t.validation;
  val.steps = v.count("steps", 0, true);
  val.freq = v.count32("freq", 1, true);
  if (fit && val.steps % t.validationStepsPerRun())
    v.fail(v.key("steps"), std::to_string(val.steps) + " must be a multiple of training.steps_per_execution (" +
                               std::to_string(t.stepsPerExecution) + "), or less than it: a validation is whole executions");
  // The validation data: the files given, read as dataset.format reads its
  // own; by default the Fashion-MNIST test set beside its training set.
  const DatasetSpec& d = w.dataset;
  const bool defaultTrainingSet = d.format == "idx" && d.images == kFashionMnistTrainImages;
  if (d.format == "synthetic") {
    for (const char* key : {"images", "labels"})
      if (v.has(key)) v.fail(v.key(key), "synthetic data draws its validation examples (seed dataset.shuffle_seed + 1): "
                                         "no file is read");
    return;
  }
  for (const char* key : {"images", "labels"})
    if (!v.has(key) && !defaultTrainingSet)
      v.fail(v.key(key), std::string("missing: the validation data's ") + key + " (a " + (d.format == "npy" ? ".npy" : "IDX") +
                             " file, as dataset." + key + "); only the default Fashion-MNIST training set has a "
                             "default, its test set");
  val.images = besideWorkload(v.string("images", kFashionMnistTestImages), baseDirectory);
  val.labels = besideWorkload(v.string("labels", kFashionMnistTestLabels), baseDirectory);
  requireFile(v, v.key("images"), val.images);
  requireFile(v, v.key("labels"), val.labels);
}

// The layer whose output a checkpoint at layer `i` keeps: `i` itself, or,
// for a RecomputationCheckpoint layer (its input passed through, no op of
// its own, so nothing of its own to keep), the layer it reads, through a
// chain of them. (Naming such a layer in training.recompute_checkpoints
// kept nothing: the layer it reads was recomputed, the opposite of what the
// layer asks for.) kNoLayer: it reads the model's input.
constexpr std::size_t kNoLayer = std::size_t(-1);
std::size_t checkpointedLayer(const Workload& w, std::size_t i) {
  while (w.layers[i].kind == layer_kind::kRecomputationCheckpoint) {
    const LayerSpec& l = w.layers[i];
    if (l.inputs.empty() || isModelInput(l.inputs[0])) return kNoLayer;
    i = l.inputs[0];
  }
  return i;
}

std::string readsTheModelInput(const LayerSpec& l) {
  return "layer '" + l.name + "' (RecomputationCheckpoint) reads the model's input: there is nothing before it to "
         "recompute; expected it after a layer";
}

// The checkpoints the model's RecomputationCheckpoint layers ask for: the
// layer each reads (a model input is refused: nothing before it to
// recompute). (In a pipeline they are dropped again: parseWorkload.)
std::vector<std::string> checkpointsFromLayers(const Workload& w, const std::string& source) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    if (w.layers[i].kind != layer_kind::kRecomputationCheckpoint) continue;
    const std::size_t kept = checkpointedLayer(w, i);
    if (kept == kNoLayer) throw std::invalid_argument(source + ": " + readsTheModelInput(w.layers[i]));
    const std::string& checkpoint = w.layers[kept].name;
    if (std::find(names.begin(), names.end(), checkpoint) == names.end()) names.push_back(checkpoint);
  }
  return names;
}

// training.recompute_checkpoints (TrainingSpec::recomputeCheckpoints): layer
// names, each once, or "auto" (auto_checkpoints.hpp). Not given: the model's
// RecomputationCheckpoint layers' (checkpointsFromLayers).
// Returns whether it is "auto", chosen once the whole workload is read (by
// parseWorkload: the choice builds the training graph).
bool parseRecomputeCheckpoints(const Reader& tr, Workload& w, const std::string& source) {
  if (!tr.has("recompute_checkpoints")) {
    w.training.recomputeCheckpoints = checkpointsFromLayers(w, source);
    return false;
  }
  const std::string key = tr.key("recompute_checkpoints");
  if (const json& given = tr.raw().at("recompute_checkpoints"); given.is_string()) {
    // (tr.string's "'AUTO' is not one of auto" did not say that a list is the other form.)
    if (given.get<std::string>() != "auto")
      tr.fail(key, "expected \"auto\" or a non-empty list of layer names, got " + given.dump());
    return true;
  }
  std::vector<std::string> names;
  for (const LayerSpec& l : w.layers) names.push_back(l.name);
  const json& given = tr.raw().at("recompute_checkpoints");
  if (!given.is_array() || given.empty())
    tr.fail(key, "expected a non-empty list of layer names, or \"auto\", got " + given.dump());
  std::vector<std::string>& checkpoints = w.training.recomputeCheckpoints;
  checkpoints = tr.strings("recompute_checkpoints");
  std::set<std::string> seen;
  for (std::size_t k = 0; k < checkpoints.size(); ++k) {
    const std::string entry = key + "[" + std::to_string(k) + "]", &name = checkpoints[k];
    if (const std::string overlong = overlongReference(name); !overlong.empty()) tr.fail(entry, overlong);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      const std::string nearest = util::nearestName(name, names);
      tr.fail(entry, "'" + name + "' names no layer of the model" +
                         (nearest.empty() ? std::string() : " (did you mean '" + nearest + "'?)"));
    }
    if (!seen.insert(name).second) tr.fail(entry, "'" + name + "' is listed twice");
  }
  // A RecomputationCheckpoint layer named stands for the layer it reads (checkpointedLayer).
  std::vector<std::string> kept;
  std::set<std::size_t> keptLayers;
  for (std::size_t k = 0; k < checkpoints.size(); ++k) {
    const std::size_t named = std::size_t(std::find(names.begin(), names.end(), checkpoints[k]) - names.begin());
    const std::size_t layer = checkpointedLayer(w, named);
    if (layer == kNoLayer) tr.fail(key + "[" + std::to_string(k) + "]", readsTheModelInput(w.layers[named]));
    if (keptLayers.insert(layer).second) kept.push_back(w.layers[layer].name);
  }
  checkpoints = std::move(kept);
  return false;
}

}  // namespace

std::vector<std::vector<std::uint64_t>> modelInputShapes(const Workload& w) {
  if (w.inputs.size() < 2) return {w.dataset.inputShape};
  std::vector<std::vector<std::uint64_t>> shapes;
  for (const ModelInput& input : w.inputs) shapes.push_back(input.shape);
  return shapes;
}

const char* taskName(Task t) {
  switch (t) {
    case Task::Fit: return "fit";
    case Task::Evaluate: return "evaluate";
    case Task::Predict: return "predict";
  }
  return "fit";
}

const char* entryPointOf(Task t) { return t == Task::Fit ? "train" : taskName(t); }

std::vector<std::size_t> modelOutputs(const Workload& w) {
  if (!w.outputs.empty()) return w.outputs;
  return {w.layers.size() - 1};
}

std::uint32_t ipusPerReplica(const Workload& w) {
  std::uint32_t highest = 0;
  for (const LayerSpec& l : w.layers) highest = std::max(highest, l.shard);
  return highest + 1;
}

std::uint32_t replicasOf(const Workload& w) { return w.ipu.numIpus / ipusPerReplica(w); }

Workload parseWorkload(const json& j, const std::string& source, const std::string& baseDirectory) {
  Reader top(j, source, "");
  top.allowOnly(kWorkloadTopLevelKeys);
  Workload w;
  w.name = top.string("name", source);
  const std::string task = top.string("task", "fit", {"fit", "evaluate", "predict"});
  w.task = task == "predict" ? Task::Predict : task == "evaluate" ? Task::Evaluate : Task::Fit;
  const Reader dataset = top.object("dataset");
  w.dataset = parseDataset(dataset, baseDirectory);
  w.seed = top.count("seed", w.seed, false);

  if (!top.has("model")) top.fail("model", "missing (expected {\"layers\": [...]} or {\"keras\": \"model.json\"})");
  const Reader model = top.object("model");
  model.allowOnly({"layers", "dtype", "keras", "weights", "inputs", "outputs", "shards", "stages"});
  std::optional<KerasModel> keras;
  if (model.has("keras")) {
    if (model.has("layers")) model.fail("model.layers", "give either model.layers or model.keras, not both");
    for (const char* key : {"inputs", "outputs"})
      if (model.has(key)) model.fail(model.key(key), "the Keras file gives its inputs and outputs (input_layers, output_layers)");
    const std::string file = model.string("keras", "");
    w.kerasModel = besideWorkload(file, baseDirectory);
    try {
      // (The file's loss and optimizer are not read when the workload gives its own.)
      keras = loadKerasModel(w.kerasModel, {top.has("loss"), top.has("optimizer")});
    } catch (const std::invalid_argument& e) {
      model.fail("model.keras", e.what());
    }
    w.layers = keras->layers;
    if (model.has("weights")) {
      w.kerasWeights = besideWorkload(model.string("weights", ""), baseDirectory);
      try {
        w.trainedWeights = std::make_shared<const TrainedWeights>(readKerasWeights(w.kerasWeights, w.layers, keras->classOf));
      } catch (const std::invalid_argument& e) {
        model.fail("model.weights", e.what());
      }
    }
    placeKerasLayers(model, top.has("pipeline"), w);
    w.kerasLayers = keras->where;
    w.dtype = keras->dtype;
    if (keras->inputs.size() > 1) w.inputs = keras->inputs;
    if (keras->outputs.size() > 1) w.outputs = keras->outputs;
  } else {
    for (const char* key : {"shards", "stages"})
      if (model.has(key))
        model.fail(model.key(key), "only with model.keras: a layer list gives each layer's shard (stage)");
    if (model.has("weights"))
      model.fail("model.weights", "only with model.keras: trained weights are read as Keras stores them, by its layers");
    LayerList parsed = parseLayers(model);
    w.layers = std::move(parsed.layers);
    w.inputs = std::move(parsed.inputs);
    w.outputs = std::move(parsed.outputs);
  }
  checkLayerCount(w, source);  // before anything walks the layers
  checkNames(w, source);
  // Keras's dtype policy names: float32 variables and compute; float16 both;
  // mixed_float16 float32 variables and float16 compute.
  w.dtype = model.string("dtype", w.dtype);
  if (!isModelledDtypePolicy(w.dtype)) model.fail(model.key("dtype"), dtypePolicyRefusal(w.dtype));

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
  if (w.inputs.size() > 1) {
    // The examples' tuple (workload.hpp): only generated data has one.
    const std::string where = keras ? "the Keras model's " : "model.inputs' ";
    std::string names;
    std::uint64_t elements = 0;
    for (const ModelInput& input : w.inputs) {
      names += (names.empty() ? "'" : ", '") + input.name + "'";
      elements += elementsOf(input.shape);
    }
    if (d.format != "synthetic")
      dataset.fail(dataset.key("format"), "'" + d.format + "': " + where + std::to_string(w.inputs.size()) + " inputs (" +
                                              names + ") need examples with one value per input, which only synthetic "
                                              "data has (set dataset.format to \"synthetic\")");
    if (dataset.has("input_shape"))
      dataset.fail(dataset.key("input_shape"), where + std::to_string(w.inputs.size()) + " inputs (" + names +
                                                   ") give their own shapes");
    if (dataset.has("features") && elements != d.features)
      dataset.fail(dataset.key("features"), std::to_string(d.features) + " differs from the " + std::to_string(elements) +
                                                " elements of " + where + "inputs (" + names + ")");
    d.inputShape = {elements};
  }
  if (keras) {
    // Sizes the Keras file leaves unknown (0) are the dataset's.
    std::string kerasInput;
    bool unknown = false;
    for (std::uint64_t v : keras->inputShape) {
      kerasInput += (kerasInput.empty() ? "" : "x") + (v ? std::to_string(v) : std::string("?"));
      unknown = unknown || v == 0;
    }
    if (unknown && d.inputShape.empty())
      dataset.fail(dataset.key("input_shape"), "missing: the Keras model's input is " + kerasInput +
                                                   " (sizes left unknown), so the dataset must give them "
                                                   "(with --keras: --input-shape H,W,C)");
    bool fits = d.inputShape.empty() || d.inputShape.size() == keras->inputShape.size();
    for (std::size_t i = 0; fits && i < d.inputShape.size(); ++i)
      fits = keras->inputShape[i] == 0 || keras->inputShape[i] == d.inputShape[i];
    if (!fits)
      dataset.fail(dataset.key("input_shape"), shapeText(d.inputShape) + " differs from the Keras model's input " + kerasInput);
    if (dataset.has("features") && !dataset.has("input_shape") && elementsOf(keras->inputShape) != d.features)
      dataset.fail(dataset.key("features"), std::to_string(d.features) + " differs from the Keras model's input " +
                                                shapeText(keras->inputShape));
    if (d.inputShape.empty()) d.inputShape = keras->inputShape;
    if (keras->batchSize && !dataset.has("batch_size")) d.batchSize = keras->batchSize;  // the model fixes its batch
    if (keras->batchSize && d.batchSize != keras->batchSize)
      dataset.fail(dataset.key("batch_size"), std::to_string(d.batchSize) + " differs from the Keras model's fixed batch size " +
                                                  std::to_string(keras->batchSize));
  }
  if (d.inputShape.empty()) d.inputShape = {d.features};
  if (elementsOf(d.inputShape) > 0xffffffffull) dataset.fail(dataset.key("input_shape"), "too many elements per example");
  d.features = std::uint32_t(elementsOf(d.inputShape));
  const LayerKeyNamer layerKey = [&](std::size_t i, const std::string& key) {
    if (keras) return w.kerasLayers[i] + (key.empty() ? "" : ": " + key);
    return "model.layers[" + std::to_string(i) + "]" + (key.empty() ? "" : "." + key);
  };
  inferLayerShapes(w.layers, modelInputShapes(w), keras ? w.kerasModel : source, layerKey);
  resolveTokenInputs(w, [&](std::size_t i, const std::string& key, const std::string& what) {
    if (i == ~std::size_t(0)) dataset.fail(dataset.key(key), what);
    throw std::invalid_argument((keras ? w.kerasModel : source) + ": " + layerKey(i, key) + ": " + what);
  });

  // The loss and optimizer: the workload's, else the Keras compile_config's, else the defaults.
  if (top.has("loss") || !keras || !keras->loss) w.loss = parseLoss(top);
  else w.loss = *keras->loss;
  if (top.has("optimizer") || !keras || !keras->optimizer) w.optimizer = parseOptimizer(top.object("optimizer"));
  else w.optimizer = *keras->optimizer;
  const bool ce = w.loss.type == "sparse_categorical_crossentropy" || w.loss.type == "categorical_crossentropy";
  const std::vector<std::uint64_t>& firstOutput = w.layers[modelOutputs(w).front()].outputShape;
  if (ce && keras && !dataset.has("classes") && firstOutput.size() == 1 && firstOutput[0] <= 0xffffffffull)
    d.classes = std::uint32_t(firstOutput[0]);
  // Sparse categorical cross-entropy on [steps, classes] scores (a language
  // model's): a class label per step (DatasetSpec::labelSteps).
  if (w.loss.classIndexLabels() && firstOutput.size() == 2 && firstOutput[0] > 1) {
    d.labelSteps = firstOutput[0];
    if (keras && !dataset.has("classes") && firstOutput[1] <= 0xffffffffull) d.classes = std::uint32_t(firstOutput[1]);
    if (d.format == "idx")
      dataset.fail(dataset.key("format"), "'" + d.format + "': the model outputs " + shapeText(firstOutput) +
                                              " per example, a class per step, and an IDX labels file holds one label per "
                                              "example: per-step labels come from synthetic data or a (examples, steps) "
                                              ".npy file (format 'synthetic' or 'npy')");
    if (modelOutputs(w).size() > 1)
      throw std::invalid_argument((keras ? w.kerasModel : source) + ": the output '" + w.layers[modelOutputs(w).front()].name +
                                  "' has a class per step: a model with several outputs shares one label per example");
  }
  // A binary classifier (binary cross-entropy on one unit): its target is the
  // label itself, one of 2 classes.
  w.loss.labelIsTarget = w.loss.type == "binary_crossentropy" && elementsOf(firstOutput) == 1;
  if (w.loss.labelIsTarget && !dataset.has("classes")) d.classes = 2;
  // A regression output that is not the classes' one-hot vector: targets of its own shape.
  if (w.loss.regression() && (elementsOf(firstOutput) != d.classes || elementsOf(firstOutput) != firstOutput.back()))
    w.loss.targetElements = elementsOf(firstOutput);
  checkModelAgainstLoss(w, keras ? w.kerasModel : source, keras ? "the Keras model" : "model.layers",
                        top.has("loss") ? source : "");
  // The metrics: the workload's, else the Keras compile_config's, read against the final loss.
  if (top.has("metrics"))
    readMetrics(top.raw().at("metrics"), w.loss, [&](const std::string& what) { top.fail("metrics", what); });
  else if (keras)
    readMetrics(keras->metrics, w.loss, [&](const std::string& what) {
      throw std::invalid_argument(w.kerasModel + ": compile_config: metrics: " + what +
                                  (top.has("loss") ? " (the loss is " + source + "'s, which replaces the Keras file's)" : ""));
    });

  Reader tr = top.object("training");
  tr.allowOnly({"steps", "steps_per_execution", "feeds", "infeed", "outfeed", "gradient_accumulation_count",
                "steps_per_epoch", "validation", "recompute_checkpoints", "offload_optimizer_state",
                "replicated_optimizer_state_sharding"});
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
    tr.fail("training.steps", std::to_string(w.training.steps) + " must be a multiple of training.steps_per_execution (" +
                                  std::to_string(w.training.stepsPerExecution) + ")");
  w.training.gradientAccumulationCount =
      tr.count32("gradient_accumulation_count", w.training.gradientAccumulationCount, true);
  if (w.training.stepsPerExecution % w.training.gradientAccumulationCount)
    tr.fail("training.gradient_accumulation_count",
            std::to_string(w.training.gradientAccumulationCount) + " must divide steps_per_execution (" +
                std::to_string(w.training.stepsPerExecution) +
                (w.training.feeds ? ")" : ", 1 without feeds)") + ": the weights are updated within one execution");
  parseValidation(tr, w, baseDirectory);
  const bool autoCheckpoints = parseRecomputeCheckpoints(tr, w, keras ? w.kerasModel : source);
  w.training.offloadOptimizerState = tr.boolean("offload_optimizer_state", w.training.offloadOptimizerState);
  w.training.replicatedOptimizerStateSharding =
      tr.boolean("replicated_optimizer_state_sharding", w.training.replicatedOptimizerStateSharding);

  Reader ipu = top.object("ipu");
  ipu.allowOnly({"arch", "tiles", "available_memory_proportion", "num_ipus", "system", "ipus_per_pod"});
  w.ipu.arch = ipu.string("arch", w.ipu.arch, {"ipu1", "ipu2"});
  w.ipu.tiles = ipu.count32("tiles", 0, false);
  w.ipu.numIpus = ipu.count32("num_ipus", w.ipu.numIpus, true);
  parseSystem(ipu, w);
  parsePipeline(top, w);
  // In a pipeline, checkpoints cut a stage's recomputation only in TF's
  // RecomputeAndBackpropagateInterleaved mode ("this layer has no effect
  // when used with RecomputeThenBackpropagate", TF's RecomputationCheckpoint).
  if (w.pipeline.enabled() && (autoCheckpoints || !w.training.recomputeCheckpoints.empty()) &&
      w.pipeline.recomputationMode != kRecomputeAndBackpropagateInterleaved) {
    if (tr.has("recompute_checkpoints"))
      tr.fail(tr.key("recompute_checkpoints"),
              w.pipeline.recomputes()
                  ? std::string("checkpoints have no effect with pipeline.recomputation_mode \"") +
                        kRecomputeThenBackpropagate + "\" (TF's RecomputationMode); give \"" +
                        kRecomputeAndBackpropagateInterleaved + "\" for them"
                  : std::string("a pipeline recomputes by pipeline.recomputation_mode (TF's RecomputationMode): give "
                                "it, \"") + kRecomputeAndBackpropagateInterleaved + "\" for checkpoints");
    // Such a pipelined model's RecomputationCheckpoint layers pass their inputs (the compile warns).
    w.training.recomputeCheckpoints.clear();
  }
  if (w.pipeline.enabled() && (w.inputs.size() > 1 || w.outputs.size() > 1))
    top.fail("pipeline", "a model with several inputs or outputs is not pipelined (not modelled: each stage's "
                         "passes take one input and give one output)");
  const std::uint32_t perReplica = ipusPerReplica(w);
  if (w.ipu.numIpus % perReplica)
    ipu.fail("ipu.num_ipus", std::to_string(w.ipu.numIpus) + " is not a multiple of the " +
                                 std::to_string(perReplica) + " IPUs one replica needs (" +
                                 (w.pipeline.enabled() ? "pipeline.device_mapping" : "model.layers[i].shard") +
                                 " up to " + std::to_string(perReplica - 1) + ")");
  // Where the optimizer came from, for checkTask's refusal (the compiler checks it again, nameless).
  const bool fromKeras = !top.has("optimizer") && keras && keras->optimizer;
  w.optimizerKey = fromKeras ? w.kerasModel + ": compile_config.optimizer" : source + ": optimizer";
  if (w.training.offloadOptimizerState && w.ipu.arch == "ipu1")
    tr.fail(tr.key("offload_optimizer_state"), "ipu.arch ipu1 (a C2 card) has no Streaming Memory: expected ipu2");
  // What to do without state: a pipeline was told to take an optimizer
  // that has some, which it then refused (pipelines take plain SGD only).
  const std::string statefulOptimizer =
      w.pipeline.enabled() ? "leave it false (a pipeline trains with plain SGD only)"
                           : "give one that has (SGD with momentum, Adam, RMSprop, ...) or leave it false";
  if (w.training.offloadOptimizerState && w.optimizer.slots() == 0)
    tr.fail(tr.key("offload_optimizer_state"),
            "the optimizer (" + w.optimizerKey +
                ") keeps no state to offload: SGD without momentum has no slot variables; " + statefulOptimizer);
  const std::uint32_t replicas = replicasOf(w);
  if (w.training.offloadOptimizerState && replicas > 1)
    tr.fail(tr.key("offload_optimizer_state"), "not modelled with replicas (ipu.num_ipus " + std::to_string(w.ipu.numIpus) +
                                                   " gives " + std::to_string(replicas) +
                                                   "): the remote buffers are not laid out per replica; train one "
                                                   "replica, or shard the state instead "
                                                   "(training.replicated_optimizer_state_sharding)");
  if (w.training.replicatedOptimizerStateSharding && replicas < 2)
    tr.fail(tr.key("replicated_optimizer_state_sharding"),
            "shards the optimizer state over the replicas, but ipu.num_ipus " + std::to_string(w.ipu.numIpus) +
                " gives one replica: expected 2 or more replicas, or false");
  if (w.training.replicatedOptimizerStateSharding && w.optimizer.plainSgd())
    tr.fail(tr.key("replicated_optimizer_state_sharding"),
            "the optimizer (" + w.optimizerKey + ") is plain SGD, whose update keeps no state to shard: " +
                statefulOptimizer);
  w.ipu.availableMemoryProportion = ipu.number("available_memory_proportion", w.ipu.availableMemoryProportion);
  if (!(w.ipu.availableMemoryProportion > 0 && w.ipu.availableMemoryProportion <= 1))
    ipu.fail("ipu.available_memory_proportion", "expected a number in (0, 1]");

  Reader comp = top.object("compile");
  comp.allowOnly({"scheduling", "allow_out_of_memory", "code_memory"});
  w.scheduling = comp.string("scheduling", w.scheduling,
                             {"post_order", "look_ahead", "shortest_path", "clustering", "choose_best"});
  w.allowOutOfMemory = comp.boolean("allow_out_of_memory", w.allowOutOfMemory);
  w.codeMemory = comp.boolean("code_memory", w.codeMemory);
  checkWorkloadLimits(w, source);
  // "auto" is chosen of the workload read whole (its pipeline, its frozen
  // layers; from its training graph, once every size is checked). None
  // found is refused by checkTask, for a fit only.
  w.training.recomputeAuto = autoCheckpoints;
  if (autoCheckpoints) w.training.recomputeCheckpoints = autoRecomputeCheckpoints(w);
  // A file that names no task is checked by checkTask once the command set
  // it: `ipusim predict` and `evaluate` take any optimizer, `run` (fit) not.
  if (top.has("task")) checkTask(w, source);
  return w;
}

namespace {

// Only fit updates weights: evaluate and predict read no optimizer (a Keras
// model compiled with Adam was refused its pipelined or replicated predictions).
void checkOptimizerForTask(const Workload& w) {
  if (w.task != Task::Fit) return;
  const std::string refusal = w.optimizer.multiIpuRefusal(
      replicasOf(w), w.training.gradientAccumulationCount > 1, w.pipeline.enabled());
  if (!refusal.empty()) throw std::invalid_argument(w.optimizerKey + ": " + refusal);
}

}  // namespace

void checkTask(const Workload& w, const std::string& source) {
  checkSomethingTrains(w, source);
  // (Here, not as the file is read: "auto" picked checkpoints that cut
  // nothing, and an evaluate or predict of the workload needs none.)
  if (w.task == Task::Fit && w.training.recomputeAuto && w.training.recomputeCheckpoints.empty())
    throw std::invalid_argument(
        source + ": training.recompute_checkpoints: \"auto\": the model has no layer to checkpoint that would "
                 "recompute anything (at each layer the model could be cut at, every activation the backward pass "
                 "reads before it is kept anyway: the model's input, a frozen layer's or the cut's own output); "
                 "expected a model with layers to recompute, or no recompute_checkpoints");
  checkOptimizerForTask(w);
  if (w.task == Task::Predict && w.training.feeds && w.training.outfeedMode == "LAST")
    throw std::invalid_argument(source + ": training.outfeed.mode: LAST keeps one step's outputs of each execution, "
                                "but predict returns every example's: expected ALL with task predict");
}

json readWorkloadJson(const std::string& path) {
  const std::string text = util::readInputFile(path, "workload file", kMaxWorkloadFileBytes);
  util::checkJsonNesting(text, path);
  try {
    return util::parseJsonWithUniqueKeys(text, path);  // a key given twice is refused by its path
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(path + ": not valid JSON at byte " + std::to_string(e.byte) + ": " +
                                util::jsonErrorText(e.what()));
  } catch (const json::exception& e) {  // a number out of range
    throw std::invalid_argument(path + ": not valid JSON: " + util::jsonErrorText(e.what()));
  }
}

Workload parseWorkloadFile(const json& j, const std::string& path, const std::string& source) {
  const auto slash = path.find_last_of('/');
  Workload w = parseWorkload(j, source, slash == std::string::npos ? "" : path.substr(0, slash));
  if (!j.contains("name")) {
    const std::string file = path.substr(slash == std::string::npos ? 0 : slash + 1);
    w.name = file.substr(0, file.rfind('.'));
  }
  return w;
}

Workload loadWorkload(const std::string& path) { return parseWorkloadFile(readWorkloadJson(path), path, path); }

void checkStepCounts(const Workload& w, const std::string& source) {
  const TrainingSpec& t = w.training;
  const std::uint32_t perExecution = t.feeds ? t.stepsPerExecution : 1;
  if (t.feeds && t.steps % t.stepsPerExecution)
    throw std::invalid_argument(source + ": training.steps: " + std::to_string(t.steps) +
                                " must be a multiple of training.steps_per_execution (" +
                                std::to_string(t.stepsPerExecution) + ")");
  if (perExecution % t.gradientAccumulationCount)
    throw std::invalid_argument(
        source + ": " + (w.pipeline.enabled() ? "pipeline" : "training") + ".gradient_accumulation_count: " +
        std::to_string(t.gradientAccumulationCount) + " must divide training.steps_per_execution (" +
        std::to_string(perExecution) + (t.feeds ? ")" : ", 1 without feeds)") +
        (w.pipeline.enabled() && w.task != Task::Fit
             ? ": an execution runs whole groups of that many mini-batches through the stages, as fit's do"
             : ": the weights are updated within one execution"));
  if (w.task != Task::Fit) return;  // epochs and validations are fit's (parseValidation)
  if (t.stepsPerEpoch && (t.stepsPerEpoch % perExecution || t.steps % t.stepsPerEpoch))
    throw std::invalid_argument(source + ": training.steps_per_epoch: " + std::to_string(t.stepsPerEpoch) +
                                " must be a multiple of training.steps_per_execution (" + std::to_string(perExecution) +
                                ") dividing training.steps (" + std::to_string(t.steps) + "): an epoch is whole executions");
  if (t.validation.enabled() && t.validation.steps % t.validationStepsPerRun())
    throw std::invalid_argument(source + ": training.validation.steps: " + std::to_string(t.validation.steps) +
                                " must be a multiple of training.steps_per_execution (" +
                                std::to_string(t.stepsPerExecution) + "), or less than it: a validation is whole executions");
}

}  // namespace ipusim::scheduler
