#pragma once
// Workload: a Keras-like training job described in JSON (see workloads/README.md
// for every key, its type, default and meaning). parseWorkload() checks every
// key: an unknown key, a wrong type, a missing dataset file or an invalid value
// throws std::invalid_argument naming the file and the key path
// ("mnist.json: training.steps_per_execution: expected a positive integer").
#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/models/keras_weights.hpp"
#include "scheduler/models/layer_spec.hpp"
#include "scheduler/models/optimizer_spec.hpp"

namespace ipusim::scheduler {

// Where Debian's dataset-fashion-mnist package installs the training set: a
// data location, not a machine path.
inline constexpr const char* kFashionMnistTrainImages =
    "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
inline constexpr const char* kFashionMnistTrainLabels =
    "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz";

struct DatasetSpec {
  std::string format = "idx";           // "idx" (files) or "synthetic" (generated from shuffle_seed)
  std::string images = kFashionMnistTrainImages;
  std::string labels = kFashionMnistTrainLabels;
  std::uint32_t batchSize = 32;
  std::uint64_t shuffleSeed = 0;
  std::uint32_t features = 784;            // elements per example (checked against the IDX header)
  std::vector<std::uint64_t> inputShape;   // per example, channels last; {features} unless given (or the Keras model's)
  std::uint32_t classes = 10;              // labels lie in [0, classes)
  std::uint64_t syntheticExamples = 1024;  // synthetic: examples per epoch
  // How the pixels (bytes) are fed to the model, as the model was trained on
  // them: "divide_by_255" (x / 255, in [0, 1]: the Keras tutorials' and
  // most scripts'), or "none" (0-255 as floats: a script that fed
  // load_data()'s arrays as they are, or a model that rescales its input
  // itself with a Rescaling layer).
  std::string preprocessing = "divide_by_255";
  // Token ids: when the model's input feeds Embedding layers, each element
  // of an example is an id in [0, vocabulary), streamed as int32
  // (models/token_inputs.hpp); 0: pixels, streamed as floats.
  std::uint64_t vocabulary = 0;
  // Labels per example: 1, or for sparse categorical cross-entropy on an
  // output of [steps, classes] (a language model's scores per step) one class
  // per step, the loss and accuracy then the means over every step of every
  // example, as Keras's over [batch, steps] targets (synthetic data only: a
  // labels file holds one per example). Set by parseWorkload() from the output.
  std::uint64_t labelSteps = 1;
};

// The optimizer (Keras's optimizers, schedules, clipping and weight decay):
// scheduler/models/optimizer_spec.hpp.

// The loss, as Keras's loss classes: from_logits=true means the loss applies
// softmax (sigmoid for binary cross-entropy) itself; false means the model's
// last layer already outputs probabilities (its activation must then be
// softmax, or sigmoid for binary cross-entropy).
struct LossSpec {
  // sparse_categorical_crossentropy | categorical_crossentropy | binary_crossentropy
  // | mean_squared_error | mean_absolute_error | huber | kl_divergence
  std::string type = "sparse_categorical_crossentropy";
  bool fromLogits = false;
  // categorical and binary cross-entropy: the targets t become
  // t (1 - s) + s / classes (binary: + s / 2) inside the loss, as Keras's.
  double labelSmoothing = 0;
  double delta = 1.0;  // huber: the error up to which the loss is quadratic
  // Binary cross-entropy on one sigmoid unit (a binary classifier): the
  // target is the label itself (0 or 1: dataset.classes 2), one float per
  // example. Set by parseWorkload() from the model's output.
  bool labelIsTarget = false;
  // A regression loss on an output whose elements are not the classes' (an
  // image, a sequence, one value: an autoencoder's, a segmentation's, a
  // regressor's): targets of the output's own elements per example, each
  // class's a fixed pattern of values in [0, 1) (numeric::regressionTarget),
  // so they follow from the example's label as one-hot targets do. 0: the
  // label one-hot over the classes. Set by parseWorkload() from the output.
  std::uint64_t targetElements = 0;
  // Metrics outfed beside the loss and accuracy, for the (first) output
  // (models/metric_spec.hpp): "mean_absolute_error", "mean_squared_error".
  std::vector<std::string> metrics;
  std::vector<std::string> unmodelledMetrics;  // named but not computed (the compile warns)
  // The labels the host streams: class indices (int, one per example, or
  // DatasetSpec::labelSteps) for sparse_categorical_crossentropy; the label itself (labelIsTarget); for
  // the others, the class label one-hot encoded over the model's `classes`
  // outputs (floats): categorical targets, one binary target per class, or
  // a regression target (or targetElements of its class's pattern).
  bool classIndexLabels() const { return type == "sparse_categorical_crossentropy"; }
  // Floats per example of the targets (classIndexLabels: one int).
  std::uint64_t targetWidth(std::uint32_t classes) const {
    return labelIsTarget ? 1 : targetElements ? targetElements : classes;
  }
  bool regression() const { return type == "mean_squared_error" || type == "mean_absolute_error" || type == "huber"; }
  // The losses of the model's outputs as they are (no softmax or sigmoid
  // fused into them, no from_logits): the regression losses and the
  // Kullback-Leibler divergence (of the output's probabilities).
  bool onPredictions() const { return regression() || type == "kl_divergence"; }
  // The classification losses outfeed an accuracy beside the loss.
  bool hasAccuracy() const { return !onPredictions(); }
};

// Validation during fit, as Keras's fit(validation_data=..., validation_steps,
// validation_freq): after every `freq`-th epoch (of training.steps_per_epoch
// steps), `steps` batches of the validation data go through the model as
// evaluate runs them (training=False: no gradient, no update, dropout off,
// batch normalization on its moving statistics), in the data's order, and
// their loss and metrics are outfed as val_loss, val_accuracy, ... (entry
// point "validation", streams "validation_images", "validation_labels",
// "validation_loss").
struct ValidationSpec {
  std::uint64_t steps = 0;  // validation_steps; 0: no validation
  std::uint32_t freq = 1;   // validation_freq: every this many epochs
  // The validation data, read as dataset.format reads its files (for the
  // default Fashion-MNIST training set, its test set); synthetic data draws
  // other examples (seed shuffle_seed + 1).
  std::string images, labels;
  bool enabled() const { return steps > 0; }
};

// The keys of a workload file's top level (workloads/README.md).
inline const std::set<std::string> kWorkloadTopLevelKeys = {
    "name", "task", "dataset", "model", "loss", "metrics", "optimizer", "training", "ipu", "pipeline", "compile", "seed"};

// Test-set files beside the training set's (Debian's dataset-fashion-mnist).
inline constexpr const char* kFashionMnistTestImages = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";
inline constexpr const char* kFashionMnistTestLabels = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";

struct TrainingSpec {
  std::uint64_t steps = 10000;
  // Keras's steps_per_epoch: the steps between validations (0: training.steps,
  // one epoch). A multiple of steps_per_execution dividing steps.
  std::uint64_t stepsPerEpoch = 0;
  ValidationSpec validation;
  std::uint32_t stepsPerExecution = 10;
  bool feeds = true;
  std::uint32_t prefetchDepth = 3;
  std::string outfeedMode = "ALL";  // "ALL" or "LAST"
  std::uint32_t outfeedBufferDepth = 10;
  // training.gradient_accumulation_count (as GradientAccumulationOptimizerV2):
  // the weights are updated once per this many mini-batches, with the sum of
  // their gradients. Divides steps_per_execution.
  std::uint32_t gradientAccumulationCount = 1;
  // training.recompute_checkpoints: layers whose outputs the backward pass
  // keeps; the forward ops between two of them run again just before their
  // backward ops, which read the recomputed values (Graphcore's manual
  // recomputation: `recompute_checkpoints` in graphcore/examples'
  // vision/cnns/pytorch/train/configs.yml; scheduler/graph/recomputation.hpp).
  // Empty: every activation the backward pass reads is kept.
  std::vector<std::string> recomputeCheckpoints;
  // Whether they are "auto"'s (auto_checkpoints.hpp): a fit whose "auto"
  // finds none is refused (checkTask); evaluate and predict recompute nothing.
  bool recomputeAuto = false;
  // training.offload_optimizer_state: the optimizer's slot variables live in
  // Streaming Memory (a remote buffer each) between their updates: each is
  // loaded onto its weight's tiles just before the weight's update and stored
  // back after it, so its tile bytes are live only then (TF's
  // offload_weight_update_variables, PopTorch's optimizer_state_offchip;
  // scheduler/graph/optimizer_updates.hpp).
  bool offloadOptimizerState = false;
  // training.replicated_optimizer_state_sharding (TF's name): with R > 1
  // replicas, each replica keeps 1/R of the optimizer state and updates
  // only its shard; a reduce-scatter of the gradients replaces the
  // all-reduce and an all-gather of the weights follows the updates
  // (scheduler/multi_ipu/replication.hpp).
  bool replicatedOptimizerStateSharding = false;
  std::uint64_t epochSteps() const { return stepsPerEpoch ? stepsPerEpoch : steps; }
  // Steps per run of the validation entry point: steps_per_execution's, or
  // all of a validation's when fewer (one step without feeds).
  std::uint64_t validationStepsPerRun() const {
    return feeds ? std::min<std::uint64_t>(stepsPerExecution, validation.steps) : 1;
  }
};

struct IpuSpec {
  std::string arch = "ipu2";
  std::uint32_t tiles = 0;  // 0: the arch's tiles per IPU
  std::uint32_t numIpus = 1;  // ipu.num_ipus (as auto_select_ipus): the graph is replicated num_ipus times
  // ipu.system: a named IPU-POD (model/system_preset.hpp) giving the IPU-Link topology, the PODs and
  // (unless given) num_ipus; empty: the arch's preset, a ladder of num_ipus IPUs.
  std::string system;
  // ipu.ipus_per_pod: PODs of that many IPUs joined by GW-Links (gwLink.ipusPerPod); 0: the system's.
  std::uint32_t ipusPerPod = 0;
  double availableMemoryProportion = 0.6;
};

// The workload's `pipeline` key (pipeline_spec.hpp): absent when stages == 0.
struct PipelineSpec {
  std::string schedule = "grouped";     // grouped | interleaved | sequential (TF's PipelineSchedule)
  std::uint32_t stages = 0;             // 1 + the highest model.layers[i].stage; 0: not pipelined
  std::vector<std::uint32_t> deviceMapping;  // stage -> IPU of a replica
  // pipeline.recomputation_mode (TF's RecomputationMode, with IPUConfig's
  // allow_recompute): "" recomputes nothing; else the mode, "Auto" resolved
  // by the schedule (graph/recomputation.hpp says what each runs).
  std::string recomputationMode;
  bool enabled() const { return stages > 0; }
  bool recomputes() const { return !recomputationMode.empty(); }
};
// TF's RecomputationMode values (pipeline.recomputation_mode).
inline constexpr const char* kRecomputeThenBackpropagate = "RecomputeThenBackpropagate";
inline constexpr const char* kRecomputeAndBackpropagateInterleaved = "RecomputeAndBackpropagateInterleaved";
// "Auto": the schedule's default (pipelining_ops.py: RecomputeThenBackpropagate
// for Grouped and Interleaved, RecomputeAndBackpropagateInterleaved for Sequential).
inline const char* autoRecomputationMode(const std::string& schedule) {
  return schedule == "sequential" ? kRecomputeAndBackpropagateInterleaved : kRecomputeThenBackpropagate;
}

// What a run of the model does, as Keras's Model methods: fit (the training
// step: forward, loss, backward, updates), evaluate (forward and the loss and
// metrics, no gradient), predict (forward only; the outputs outfed). Dropout
// and noise layers pass their input through outside fit, and batch
// normalization uses its moving statistics, as Keras calls layers with
// training=False.
enum class Task { Fit, Evaluate, Predict };
const char* taskName(Task t);  // "fit" | "evaluate" | "predict" (the workload key's values)
// The entry point a task's program is compiled as: "train", "evaluate", "predict".
const char* entryPointOf(Task t);

struct Workload {
  std::string name;  // file stem unless "name" is given
  Task task = Task::Fit;  // the workload key "task"; `ipusim evaluate` / `predict` set it
  std::string optimizerKey;  // how errors name the optimizer: "<file>: optimizer" or "<Keras file>: compile_config.optimizer"
  DatasetSpec dataset;
  std::vector<LayerSpec> layers;  // shapes inferred (LayerSpec::inputShape/outputShape)
  // A model with several inputs (a Keras file's input_layers): each example
  // is the tuple of their values, streamed as dataset.input_shape {sum of
  // their elements} and split on the device. Empty: one input, dataset.input_shape.
  std::vector<ModelInput> inputs;
  // A model with several outputs (a Keras file's output_layers; indices into
  // `layers`), each trained with the loss on the example's one label, their
  // losses added up. Empty: the last layer.
  std::vector<std::size_t> outputs;
  std::string kerasModel;         // model.keras: the Keras file the layers came from ("" for ipusim's own list)
  // model.weights: a Keras 3 weights file (a .keras archive or a .weights.h5)
  // whose trained values the weights start from ("": drawn from `seed`).
  std::string kerasWeights;
  std::shared_ptr<const TrainedWeights> trainedWeights;  // read from it, by "<layer>/<weight>" (keras_weights.hpp)
  // With kerasModel: how the file names each layer ("layer 'conv2d_1' (Conv2D)"),
  // so that checks after the import speak of the Keras layer and its key.
  std::vector<std::string> kerasLayers;
  std::string dtype = "float32";  // model.dtype: float32 | float16 | mixed_float16 (Keras policy names)
  LossSpec loss;
  OptimizerSpec optimizer;
  TrainingSpec training;
  IpuSpec ipu;
  PipelineSpec pipeline;
  std::string scheduling = "choose_best";  // post_order | look_ahead | shortest_path | clustering | choose_best
  bool allowOutOfMemory = false;            // compile.allow_out_of_memory
  // compile.code_memory: count each tile's code and vertex state
  // (model/ir/code_memory.hpp) in its memory; off by default until ipusim's
  // layouts are as coarse as Poplar's (scheduler/README.md, "Code memory").
  bool codeMemory = false;
  // Not a workload key: a timing-only runner sets it to compile identical
  // replicas once (scheduler/multi_ipu/replication.hpp, model/ir/replica_mirror.hpp).
  bool mirrorReplicas = false;
  // Not a workload key: a runner computing the numbers sets it, so that the
  // compiler holds a pipeline's mini-batches to what functional mode can
  // plan (checkFunctionalPipeline) before it lays them out.
  bool functional = false;
  std::uint64_t seed = 1;                   // weight initialisation (Glorot uniform, biases zero)
};

// The per-example shape of each model input: {dataset.input_shape} unless
// the model has several inputs.
std::vector<std::vector<std::uint64_t>> modelInputShapes(const Workload& w);
// The output layers (indices into w.layers): the last unless the model has several.
std::vector<std::size_t> modelOutputs(const Workload& w);

// IPUs one replica needs: 1 + the highest model.layers[i].shard.
std::uint32_t ipusPerReplica(const Workload& w);
// Replicas of the model: ipu.num_ipus / ipusPerReplica.
std::uint32_t replicasOf(const Workload& w);

// `source` names the document in errors (a file name); a Keras model path
// (model.keras) is relative to `baseDirectory` ("" : the current directory).
Workload parseWorkload(const nlohmann::json& j, const std::string& source, const std::string& baseDirectory = "");
// A workload file's JSON, read once for every command: a FIFO, a directory or
// a device is refused by name, so is a file above kMaxWorkloadFileBytes, JSON
// nested too deep, a syntax error and a key given twice. Errors name the file.
nlohmann::json readWorkloadJson(const std::string& path);
// The workload of a file's JSON (`j`, as read, or changed by --workload-set):
// a Keras path in it is relative to the file's directory, and a workload
// that names itself nothing is named by the file's stem. `source` names it in errors.
Workload parseWorkloadFile(const nlohmann::json& j, const std::string& path, const std::string& source);
// parseWorkloadFile(readWorkloadJson(path), path, path).
Workload loadWorkload(const std::string& path);
// A workload is a few hundred bytes of JSON (design choice: 16 MiB is room for
// any hand-written file, and refuses a mistaken path to a large file at once).
inline constexpr std::uint64_t kMaxWorkloadFileBytes = 16ull << 20;

// The step counts fit together, also after --steps / --steps-per-execution
// changed them: with feeds, training.steps is a multiple of
// training.steps_per_execution; the gradient accumulation count (training.
// or pipeline.) divides steps_per_execution (1 without feeds), since the
// weights are updated within one execution. Throws
// std::invalid_argument("<source>: <key>: ...") naming the first that does not.
// parseWorkload() holds the file's values to the same rules with messages of
// its own (tests name them); this is for values changed after parsing.
void checkStepCounts(const Workload& w, const std::string& source);
// The task fits the rest of the workload, also after `ipusim predict` set it:
// predict needs outfeed mode ALL (LAST would return one step's predictions
// of each execution); fit with replicas, gradient accumulation or a pipeline
// needs plain SGD (evaluate and predict update no weight). Throws
// std::invalid_argument("<source>: <key>: ...").
void checkTask(const Workload& w, const std::string& source);

}  // namespace ipusim::scheduler
