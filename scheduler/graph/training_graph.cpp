#include "scheduler/graph/training_graph.hpp"

#include "scheduler/graph/optimizer_updates.hpp"
#include "scheduler/graph/recomputation.hpp"
#include "scheduler/graph/regularization.hpp"
#include "scheduler/layers/activation_functions.hpp"
#include "scheduler/layers/layer.hpp"
#include "scheduler/models/auto_checkpoints.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ipusim::scheduler {
namespace {

constexpr std::size_t kNone = ~std::size_t(0);

// splitmix64 of a seed and a salt: independent streams per kernel and per
// dropout layer from one workload seed.
std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t salt) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (salt + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The per-example shape the images are fed in: the model's input shape when
// the first layer that computes needs its input in its own shape (a
// convolution, pooling, padding, or a batch normalization over a channels
// axis; a flatten or reshape before it moves no element), else a flat vector
// of the dataset's features.
std::vector<std::uint64_t> imageShape(const Workload& w) {
  for (const LayerSpec& l : w.layers) {
    if (l.kind == layer_kind::kFlatten || l.kind == layer_kind::kReshape) continue;
    if (layerOfKind(l.kind).readsShapedInput(l)) return l.inputShape;
    break;
  }
  return {w.dataset.features};
}

// One output's loss per example, in float whatever the output's type: the
// ops computing it from the output `x` and the labels, and the value its
// gradient seed will write (addLossGradient). `layer` names the ops' layer:
// "loss", or "loss/<output layer>" for one of several outputs.
struct OutputLoss {
  std::size_t x = kNone, perRow = kNone, probs = kNone, grad = kNone;
  std::size_t targets = kNone;  // dense targets: the labels, or the smoothed labels
  std::uint64_t features = 0;
  std::string layer;
  std::size_t rowWeights = kNone;  // a masked output's (Keras's apply_mask), or kNone
};

// The targets a loss over dense targets reads: the labels, or with label
// smoothing t (1 - s) + s / classes (binary: + s / 2), as Keras's
// cross-entropies smooth them inside the loss (the metrics read the labels).
std::size_t lossTargets(TrainingGraphBuilder& b, std::uint64_t features, const std::string& layer) {
  OpGraph& g = b.graph();
  const LossSpec& loss = b.workload().loss;
  if (loss.labelSmoothing == 0) return g.labels;
  LayerSpec owner;
  owner.name = layer;
  const double s = loss.labelSmoothing;
  const double shift = loss.type == "binary_crossentropy" ? s / 2 : s / double(features);
  // (Float constants: the targets and the loss are float whatever the model computes in.)
  auto constant = [&](const char* name, double value) {
    const std::size_t v = b.state(owner, name, {features}, ir::DType::Float, 0);
    g.values[v].initialValues = std::vector<double>(features, value);
    return v;
  };
  const std::size_t scale = constant("smoothing_scale", 1 - s);
  const std::size_t offset = constant("smoothing_shift", shift);
  const std::size_t smoothed =
      b.value(layer + "/smoothed_targets", g.values[g.labels].shape, ir::DType::Float, ValueKind::Activation, layer);
  g.addOp({OpKind::ScaleShift, "label_smoothing", layer, {g.labels, scale, offset}, {smoothed}});
  return smoothed;
}

// The rows the loss averages over: one per example, or one per step of
// each example for a sequence's per-step classes (DatasetSpec::labelSteps).
std::uint64_t lossRows(TrainingGraphBuilder& b) { return b.batch() * b.workload().dataset.labelSteps; }

OutputLoss addRowLoss(TrainingGraphBuilder& b, std::size_t x, std::uint64_t features, const std::string& layer) {
  using ir::DType;
  OpGraph& g = b.graph();
  const Workload& w = b.workload();
  const std::uint64_t batch = lossRows(b);
  const bool predictions = w.loss.onPredictions();
  const bool binary = w.loss.type == "binary_crossentropy";
  OutputLoss out{x, kNone, kNone, kNone, kNone, features, layer};
  out.perRow = b.value(layer + "/per_example", {batch}, DType::Float, ValueKind::Activation, layer);
  if (b.training()) out.grad = b.value(layer + "/logits_grad", {batch, features}, b.compute(), ValueKind::Gradient, layer);
  if (w.loss.classIndexLabels()) {
    // Sparse categorical cross-entropy: with from_logits=false the last
    // layer's softmax is fused into it (as TF's Keras does: it takes the
    // softmax's logits), with from_logits=true the loss applies the softmax
    // itself: either way softmax and cross-entropy are one op.
    out.probs = b.value(layer + "/probs", {batch, features}, DType::Float, ValueKind::Activation, layer);
    g.addOp({OpKind::SoftmaxCrossEntropy, "sparse_softmax_cross_entropy", layer, {x, g.labels}, {out.probs, out.perRow}});
  } else {
    // Over one-hot targets (or the label itself): categorical cross-entropy
    // (softmax fused), binary cross-entropy (sigmoid fused; the mean over the
    // classes), or the mean squared or absolute error or the Huber loss of
    // the predictions (the mean over the classes), or the Kullback-Leibler
    // divergence of the predictions (the sum over the classes).
    out.targets = lossTargets(b, features, layer);
    Op op{OpKind::RowLoss, w.loss.type, layer, {x, out.targets}, {}};
    op.codelet = w.loss.type == "mean_squared_error"    ? "SquaredError"
                 : w.loss.type == "mean_absolute_error" ? "AbsoluteError"
                 : w.loss.type == "huber"               ? "HuberError"
                 : w.loss.type == "kl_divergence"       ? "KlDivergence"
                 : binary                               ? "SigmoidCrossEntropy"
                                                        : "SoftmaxCrossEntropyDense";
    op.delta = w.loss.delta;
    if (!predictions) out.probs = b.value(layer + "/probs", {batch, features}, DType::Float, ValueKind::Activation, layer);
    op.outputs = predictions ? std::vector<std::size_t>{out.perRow} : std::vector<std::size_t>{out.probs, out.perRow};
    g.addOp(op);
  }
  return out;
}

// Accuracy, a metric beside the loss (Keras's sparse_categorical_accuracy,
// categorical_accuracy or binary_accuracy) of one output: the batch mean in
// element 1 of g.loss.
void addAccuracy(TrainingGraphBuilder& b, const OutputLoss& o) {
  OpGraph& g = b.graph();
  const Workload& w = b.workload();
  const std::uint64_t batch = lossRows(b);
  const std::size_t correct = b.value(o.layer + "/correct", {batch}, ir::DType::Float, ValueKind::Activation, o.layer);
  if (w.loss.classIndexLabels()) {
    g.addOp({OpKind::Accuracy, "accuracy", o.layer, {o.probs, g.labels}, {correct}});
  } else {
    Op op{OpKind::RowLoss, "accuracy", o.layer, {o.probs, g.labels}, {correct}};
    op.codelet = w.loss.type == "binary_crossentropy" ? "BinaryAccuracy" : "CategoricalAccuracy";
    g.addOp(op);
  }
  Op accuracy{OpKind::MeanLoss, "accuracy_mean", o.layer, {correct, g.loss}, {}};
  accuracy.scale = 1.0 / double(batch);
  accuracy.index = 1;
  g.addOp(accuracy);
}

// The metrics beside the loss (LossSpec::metrics, models/metric_spec.hpp)
// of one output, each the batch mean of a per-example error of its
// predictions (the probabilities where a cross-entropy fuses its softmax or
// sigmoid) against the unsmoothed targets, in an element of g.loss of its own.
void addMetrics(TrainingGraphBuilder& b, const OutputLoss& o) {
  OpGraph& g = b.graph();
  const std::uint64_t batch = lossRows(b);
  const std::size_t predictions = o.probs != kNone ? o.probs : o.x;
  const LossSpec& loss = b.workload().loss;
  if (!loss.unmodelledMetrics.empty()) {
    std::string names;
    for (const std::string& m : loss.unmodelledMetrics) names += (names.empty() ? "" : ", ") + m;
    g.warnings.push_back("metrics not computed: " + names + " (ipusim computes the accuracy, mae and mse; the "
                         "training is the same)");
  }
  for (const std::string& metric : loss.metrics) {
    const std::uint64_t index = g.values[g.loss].shape.at(0);
    g.values[g.loss].shape[0] = index + 1;
    g.outfeed.push_back(metric);
    const std::size_t perRow = b.value(o.layer + "/" + metric, {batch}, ir::DType::Float, ValueKind::Activation, o.layer);
    Op error{OpKind::RowLoss, metric, o.layer, {predictions, g.labels}, {perRow}};
    error.codelet = metric == "mean_absolute_error" ? "AbsoluteError" : "SquaredError";
    g.addOp(error);
    Op mean{OpKind::MeanLoss, metric + "_mean", o.layer, {perRow, g.loss}, {}};
    mean.scale = 1.0 / double(batch);
    mean.index = index;
    g.addOp(mean);
  }
}

// The gradient of the loss w.r.t. one output (the logits; the predictions
// for the regression losses): (probabilities - targets) scaled by the means
// the loss takes (1/batch; binary cross-entropy and the regression losses
// also average over the classes, and the square brings a 2); the absolute
// error's is the sign of the difference, Huber's the difference clipped to
// [-delta, delta]; the Kullback-Leibler divergence's -t / p where Keras's
// clip of p to [epsilon, 1] passes it (0 outside, as TF's clip_by_value).
void addLossGradient(TrainingGraphBuilder& b, const OutputLoss& o) {
  OpGraph& g = b.graph();
  const Workload& w = b.workload();
  const double batch = double(lossRows(b));
  const bool squared = w.loss.type == "mean_squared_error";
  const bool binary = w.loss.type == "binary_crossentropy";
  const bool regression = w.loss.regression();
  if (w.loss.classIndexLabels()) {
    Op seed{OpKind::SoftmaxCrossEntropyGrad, "sparse_softmax_cross_entropy_grad", o.layer, {o.probs, g.labels}, {o.grad}};
    if (o.rowWeights != kNone) seed.inputs.push_back(o.rowWeights);  // each row's weight under the mask
    seed.scale = 1.0 / batch;
    g.addOp(seed);
  } else {
    Op seed{OpKind::TargetDifference, w.loss.type + "_grad", o.layer, {w.loss.onPredictions() ? o.x : o.probs, o.targets}, {o.grad}};
    seed.scale = (squared ? 2.0 : 1.0) / batch / (binary || regression ? double(o.features) : 1.0);
    seed.codelet = w.loss.type == "mean_absolute_error" ? "TargetSign"
                   : w.loss.type == "huber"            ? "TargetClip"
                   : w.loss.type == "kl_divergence"    ? "TargetKlDivergence"
                                                       : "TargetDifference";
    seed.delta = w.loss.delta;
    g.addOp(seed);
  }
}

// The loss of the model's outputs into g.loss (their sum, as Keras adds the
// losses of a model's outputs), with the first output's accuracy beside it;
// returns the gradient of the loss w.r.t. each output.
// A masked output's loss (Keras's Loss.__call__ with the output's mask:
// apply_mask weighs each row m x total / (valid + epsilon), so the mean is
// sum(loss m) / valid): the row weights from the mask's token ids, and the
// rows' losses weighted. Keras 3's metrics read no mask without a
// sample_weight (MeanMetricWrapper.update_state): the accuracy stays the
// mean over every row.
void weighByMask(TrainingGraphBuilder& b, OutputLoss& o, std::size_t maskIds) {
  OpGraph& g = b.graph();
  const std::uint64_t rows = lossRows(b);
  const std::size_t ids = b.reshape(maskIds, {rows}, o.layer, "mask_ids");
  o.rowWeights = b.value(o.layer + "/mask_weights", {rows}, ir::DType::Float, ValueKind::Activation, o.layer);
  Op weights{OpKind::IdMask, "mask_weights", o.layer, {ids}, {o.rowWeights}};
  weights.index = 4;
  g.addOp(weights);
  const std::size_t weighted = b.value(o.layer + "/per_example_masked", {rows}, ir::DType::Float, ValueKind::Activation, o.layer);
  g.addOp({OpKind::Mul, "per_example_masked", o.layer, {o.perRow, o.rowWeights}, {weighted}});
  o.perRow = weighted;
}

// The mask of output layer `l` (token ids) when its loss can take it: one
// output, sparse categorical cross-entropy, a mask over the label's steps.
// `where`: the file and key its errors start with.
std::size_t checkedOutputMask(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t ids, const std::string& where) {
  const Workload& w = b.workload();
  const std::string what = where + "the output layer ('" + l.name +
                           "') carries Keras's mask (an Embedding's mask_zero or a Masking layer's)";
  if (modelOutputs(w).size() > 1)
    throw std::invalid_argument(what + ": a masked loss of a model with several outputs is not modelled");
  if (w.loss.type != "sparse_categorical_crossentropy")
    throw std::invalid_argument(what + ": a masked " + w.loss.type +
                                " is not modelled (sparse_categorical_crossentropy over a class per step is)");
  const std::uint64_t steps = b.graph().values[ids].numElements() / b.batch();
  if (steps != w.dataset.labelSteps)
    throw std::invalid_argument(what + " over " + std::to_string(steps) + " steps, but the loss reads " +
                                std::to_string(w.dataset.labelSteps) + " label(s) per example (the shapes do not fit)");
  return ids;
}

std::vector<std::size_t> addLoss(TrainingGraphBuilder& b, const std::vector<std::size_t>& outputs,
                                 const std::vector<std::uint64_t>& features, const std::vector<std::string>& names,
                                 std::size_t maskIds) {
  OpGraph& g = b.graph();
  const Workload& w = b.workload();
  const std::uint64_t batch = lossRows(b);
  g.loss = b.value("loss", {w.loss.hasAccuracy() ? 2u : 1u}, ir::DType::Float, ValueKind::Loss, "loss");
  g.outfeed = {"loss"};
  if (w.loss.hasAccuracy()) g.outfeed.push_back("accuracy");
  std::vector<OutputLoss> losses;
  for (std::size_t k = 0; k < outputs.size(); ++k)
    losses.push_back(addRowLoss(b, outputs[k], features[k], outputs.size() > 1 ? "loss/" + names[k] : "loss"));
  if (maskIds != kNone) weighByMask(b, losses[0], maskIds);
  std::size_t perRow = losses[0].perRow;
  for (std::size_t k = 1; k < losses.size(); ++k) {
    const std::size_t sum = b.value("loss/per_example_sum" + std::to_string(k), {batch}, ir::DType::Float,
                                    ValueKind::Activation, "loss");
    g.addOp({OpKind::Add, "per_example_sum" + std::to_string(k), "loss", {perRow, losses[k].perRow}, {sum}});
    perRow = sum;
  }
  Op mean{OpKind::MeanLoss, "mean", "loss", {perRow}, {g.loss}};
  mean.scale = 1.0 / double(batch);
  g.addOp(mean);
  if (w.loss.hasAccuracy()) addAccuracy(b, losses[0]);
  addMetrics(b, losses[0]);
  std::vector<std::size_t> grads;
  if (!b.training()) return grads;  // evaluate: the loss and metrics only
  for (const OutputLoss& o : losses) {
    addLossGradient(b, o);
    grads.push_back(o.grad);
  }
  return grads;
}

// Predict's outfeed (g.loss, named "predictions"): each example's outputs
// in float, a row per example (per step with a class per step), the model's
// outputs side by side (a Concat) when it has several, each as Keras's
// predict returns it (with its softmax or sigmoid: fusedWithLoss is off).
void addPredictions(TrainingGraphBuilder& b, const std::vector<std::size_t>& outputOf) {
  OpGraph& g = b.graph();
  const Workload& w = b.workload();
  const std::uint64_t rows = lossRows(b);
  Op concat{OpKind::Concat, "predictions", "predictions", {}, {}};
  concat.rows = rows;
  std::uint64_t width = 0;
  for (std::size_t o : modelOutputs(w)) {
    const LayerSpec& l = w.layers[o];
    const std::uint64_t columns = elementsOf(l.outputShape) * b.batch() / rows;
    const std::size_t shaped = b.reshape(outputOf.at(o), {rows, columns}, l.name, "output_rows");
    concat.inputs.push_back(b.cast(shaped, ir::DType::Float, l.name + "/predictions_cast", l.name, ValueKind::Activation));
    concat.blocks.push_back(columns);
    width += columns;
  }
  if (concat.inputs.size() == 1) {
    g.loss = concat.inputs[0];
  } else {
    g.loss = b.value("predictions", {rows, width}, ir::DType::Float, ValueKind::Activation, "predictions");
    concat.outputs = {g.loss};
    g.addOp(concat);
  }
  g.outfeed = {"predictions"};
}

// The values the layers read as the model's inputs, in the compute type:
// the images; or, for a model with several inputs, each input's columns of
// them, copied out (a Slice) in its own shape (the host streams an example's
// inputs as one tuple; Poplar would stream each to its own tensor, without
// the copy).
std::vector<std::size_t> modelInputValues(TrainingGraphBuilder& b) {
  OpGraph& g = b.graph();
  const Workload& w = b.workload();
  if (g.values[g.images].dtype == ir::DType::Int) return {g.images};  // token ids, read by embeddings only
  if (w.inputs.size() < 2) return {b.cast(g.images, b.compute(), "input/cast", "input", ValueKind::Activation)};
  std::vector<std::size_t> values;
  std::uint64_t offset = 0;
  for (const ModelInput& input : w.inputs) {
    const std::uint64_t elements = elementsOf(input.shape);
    const std::string layer = "input/" + input.name;
    const std::size_t columns = b.value(layer + "/slice", {b.batch(), elements}, ir::DType::Float, ValueKind::Activation, layer);
    Op slice{OpKind::Slice, "slice", layer, {g.images}, {columns}};
    slice.rows = b.batch();
    slice.blocks = {offset, elements, w.dataset.features};
    g.addOp(slice);
    offset += elements;
    const std::size_t shaped = b.shaped(columns, input.shape, layer, "reshape");
    values.push_back(b.cast(shaped, b.compute(), layer + "/cast", layer, ValueKind::Activation));
  }
  return values;
}

}  // namespace

// ---- the builder ----

TrainingGraphBuilder::TrainingGraphBuilder(const Workload& w)
    : w_(w),
      training_(w.task == Task::Fit),
      compute_(w.dtype == "float32" ? ir::DType::Float : ir::DType::Half),
      variables_(w.dtype == "float16" ? ir::DType::Half : ir::DType::Float) {}

std::size_t TrainingGraphBuilder::value(std::string name, std::vector<std::uint64_t> shape, ir::DType dtype,
                                        ValueKind kind, std::string layer, std::optional<ir::DrawnInit> init,
                                        double fill) {
  return g_.addValue({std::move(name), std::move(shape), dtype, kind, std::move(layer), init, fill});
}

std::size_t TrainingGraphBuilder::cast(std::size_t v, ir::DType to, const std::string& name, const std::string& layer,
                                       ValueKind kind) {
  if (g_.values[v].dtype == to) return v;
  const std::size_t out = value(name, g_.values[v].shape, to, kind, layer);
  g_.addOp({OpKind::Cast, name.substr(name.find('/') + 1), layer, {v}, {out}});
  return out;
}

std::size_t TrainingGraphBuilder::sharedValue(const LayerSpec& l, const std::string& name,
                                              const std::vector<std::uint64_t>& shape) const {
  const auto it = layerValues_.find(l.weightsOwner() + "/" + name);
  if (it == layerValues_.end()) return kNone;
  if (g_.values[it->second].shape != shape)
    throw std::invalid_argument("layer '" + l.name + "': calls layer '" + l.weightsOwner() + "' again, but its " + name +
                                " would be " + shapeText(shape) + " where the first call's is " +
                                shapeText(g_.values[it->second].shape) + " (a shared layer's inputs must agree)");
  return it->second;
}

std::size_t TrainingGraphBuilder::weight(const LayerSpec& l, const std::string& name, std::vector<std::uint64_t> shape,
                                         const WeightInit& init, double fill, std::vector<std::uint64_t> kerasShape) {
  if (const std::size_t shared = sharedValue(l, name, shape); shared != kNone) return shared;
  const std::string& owner = l.weightsOwner();
  std::optional<ir::DrawnInit> drawn;
  if (const auto it = l.initializers.find(name); it != l.initializers.end()) {
    // The file's own initializer: its seed from the workload seed and the
    // weight's name (FNV-1a), so that no other weight's draw moves.
    std::uint64_t h = 1469598103934665603ull;
    for (const char ch : owner + "/" + name) h = (h ^ std::uint8_t(ch)) * 1099511628211ull;
    const std::string key = it->second.key.empty() ? name + "_initializer" : it->second.key;
    const InitialValues values = initialValuesOf(it->second, kerasShape.empty() ? shape : kerasShape,
                                                 mixSeed(w_.seed, h), [&](const std::string& what) {
      throw std::invalid_argument("layer '" + l.name + "': " + key + ": " + what);
    });
    drawn = values.drawn;
    fill = values.fill;
  } else if (init) {
    drawn = init();
  }
  const TrainedWeight* trained = trainedValues(l, name, kerasShape.empty() ? shape : kerasShape);
  if (trained) drawn.reset(), fill = 0;
  // A frozen layer's weight is state: drawn or read as a weight is, never updated.
  const ValueKind kind = l.trainable ? ValueKind::Weight : ValueKind::NonTrainable;
  const std::size_t v = value(owner + "/" + name, std::move(shape), variables_, kind, owner, drawn, fill);
  if (trained) g_.values[v].initialValues = trained->values;
  layerValues_.emplace(owner + "/" + name, v);
  g_.modelWeights.push_back(v);
  if (!l.trainable) return v;
  g_.weights.push_back(v);
  if (const auto r = l.regularizers.find(name); r != l.regularizers.end())
    penalties_.push_back({v, r->second.l1, r->second.l2, false});
  return v;
}

std::size_t TrainingGraphBuilder::state(const LayerSpec& l, const std::string& name, std::vector<std::uint64_t> shape,
                                        ir::DType dtype, double fill) {
  if (const std::size_t shared = sharedValue(l, name, shape); shared != kNone) return shared;
  const std::string& owner = l.weightsOwner();
  const TrainedWeight* trained = trainedValues(l, name, shape);
  const std::size_t v = value(owner + "/" + name, std::move(shape), dtype, ValueKind::NonTrainable, owner, std::nullopt,
                              trained ? 0 : fill);
  if (trained) g_.values[v].initialValues = trained->values;
  layerValues_.emplace(owner + "/" + name, v);
  return v;
}

const TrainedWeight* TrainingGraphBuilder::trainedValues(const LayerSpec& l, const std::string& name,
                                                         const std::vector<std::uint64_t>& kerasShape) const {
  if (!w_.trainedWeights) return nullptr;
  const auto it = w_.trainedWeights->find(l.weightsOwner() + "/" + name);
  if (it == w_.trainedWeights->end()) return nullptr;
  if (it->second.shape != kerasShape)
    throw std::invalid_argument("layer '" + l.name + "': its " + name + " in " + w_.kerasWeights + " is " +
                                shapeText(it->second.shape) + " but the model's is " + shapeText(kerasShape) +
                                " (the weights of another model?)");
  return &it->second;
}

void TrainingGraphBuilder::updatesInPlace(std::size_t state, std::size_t op) {
  const auto [it, first] = lastUpdate_.emplace(state, op);
  if (first) return;
  g_.addOrderEdge(it->second, op);
  it->second = op;
}

// Glorot uniform: U(-l, l), l = sqrt(6 / (fanIn + fanOut)), drawn when the
// executable is loaded (ir::DrawnInit), from a seed per kernel: the
// workload seed and the kernel's position, mixed by splitmix64.
ir::DrawnInit TrainingGraphBuilder::glorotUniform(std::uint64_t fanIn, std::uint64_t fanOut) {
  return {mixSeed(w_.seed, kernels_++), std::sqrt(6.0 / double(fanIn + fanOut))};
}

std::size_t TrainingGraphBuilder::stepCounter() {
  if (g_.stepCounter == kNone) {
    g_.stepCounter = value("iterations", {1}, ir::DType::Int, ValueKind::StepCounter, "training");
    g_.addOp({OpKind::IncrementStep, "increment", "training", {g_.stepCounter}, {}});
  }
  return g_.stepCounter;
}

std::size_t TrainingGraphBuilder::shaped(std::size_t x, const std::vector<std::uint64_t>& perExample,
                                         const std::string& layer, const std::string& name) {
  std::vector<std::uint64_t> shape{batch()};
  shape.insert(shape.end(), perExample.begin(), perExample.end());
  return reshape(x, shape, layer, name);
}

std::size_t TrainingGraphBuilder::reshape(std::size_t x, const std::vector<std::uint64_t>& shape,
                                          const std::string& layer, const std::string& name) {
  if (g_.values[x].shape == shape) return x;
  const std::size_t out = value(layer + "/" + name, shape, g_.values[x].dtype, ValueKind::Activation, layer);
  g_.addOp({OpKind::Reshape, name, layer, {x}, {out}});
  const std::vector<std::uint64_t> back = g_.values[x].shape;
  record({x}, out, false, [this, x, back, layer, name](const Backward& bw) {
    const std::size_t dx = value(layer + "/" + name + "_grad", back, compute_, ValueKind::Gradient, layer);
    g_.addOp({OpKind::Reshape, name + "_grad", layer, {bw.grad}, {dx}});
    bw.deliver(x, dx);
  });
  return out;
}

std::size_t TrainingGraphBuilder::activation(const LayerSpec& l, Activation a, std::size_t x) {
  return addActivation(*this, l, a, l.activationParams, x);  // layers/activation_functions.hpp
}

std::size_t TrainingGraphBuilder::bias(const LayerSpec& l, std::size_t x, std::vector<std::uint64_t> kerasShape) {
  if (!l.useBias) return x;
  const std::uint64_t units = g_.values[x].shape.back();
  const std::size_t bias = weight(l, "bias", {units}, {}, 0, std::move(kerasShape));
  const std::size_t biasUsed = cast(bias, compute_, l.name + "/bias_cast", l.name, ValueKind::Activation);
  const std::size_t out = value(l.name + "/bias_add", g_.values[x].shape, compute_, ValueKind::Activation, l.name);
  g_.addOp({OpKind::AddBias, "bias_add", l.name, {x, biasUsed}, {out}});
  // The add passes the gradient through; the bias gradient sums it over every
  // dimension but the last (ReduceRows), in float, delivered in the variables' type.
  record({x}, out, trains(bias), [this, x, bias, layer = l.name, units](const Backward& bw) {
    if (bw.trains(bias)) {
      const std::size_t db = value(layer + "/bias_grad", {units}, variables_, ValueKind::Gradient, layer);
      g_.addOp({OpKind::ReduceRows, "bias_grad", layer, {bw.grad}, {db}});
      bw.weightGradient(bias, db);
    }
    bw.deliver(x, bw.grad);
  });
  return out;
}

void TrainingGraphBuilder::record(std::vector<std::size_t> inputs, std::size_t output, bool weighted,
                                  BackwardFn backward) {
  bool depends = weighted;
  for (std::size_t in : inputs) depends = depends || dependsOnWeights(in);
  depends_.resize(g_.values.size(), 0);
  depends_[output] = depends;
  tape_.push_back({std::move(inputs), output, std::move(backward)});
}

void TrainingGraphBuilder::accumulate(std::size_t v, std::size_t gradient) {
  const auto [it, first] = gradOf_.emplace(v, gradient);
  if (first) return;
  const std::string layer = g_.values[v].layer;
  const std::size_t sum = value(layer + "/grad_sum", g_.values[gradient].shape, compute_, ValueKind::Gradient, layer);
  g_.addOp({OpKind::Add, "grad_sum", layer, {it->second, gradient}, {sum}});
  it->second = sum;
}

void TrainingGraphBuilder::penalizeActivity(const LayerSpec& l, std::size_t output) {
  const auto r = l.regularizers.find(kActivityRegularizer);
  if (r == l.regularizers.end()) return;
  // Keras divides the activity penalty by the batch size (Layer.__call__).
  const double perExample = 1.0 / double(batch());
  penalties_.push_back({output, r->second.l1 * perExample, r->second.l2 * perExample, true});
}

std::map<std::size_t, std::size_t> TrainingGraphBuilder::backward(
    const std::vector<std::pair<std::size_t, std::size_t>>& outputGrads) {
  for (const auto& [output, grad] : outputGrads) accumulate(output, grad);
  for (const Penalty& p : penalties_)
    if (p.activity && dependsOnWeights(p.value)) accumulate(p.value, addPenaltyGradient(g_, p, compute_));
  for (std::size_t i = tape_.size(); i-- > 0;) {
    const Entry& e = tape_[i];
    if (const std::size_t joined = joinColumnParts(e.output); joined != kNone) accumulate(e.output, joined);
    const auto found = gradOf_.find(e.output);
    if (found == gradOf_.end() || !dependsOnWeights(e.output)) continue;
    e.backward(Backward{*this, found->second});
  }
  // Weights read in column slices (a recurrent kernel's gates): their parts, summed over the reads.
  while (!columnParts_.empty()) {
    const std::size_t w = columnParts_.begin()->first;
    Backward{*this, kNone}.weightGradient(w, joinColumnParts(w));
  }
  return weightGrad_;
}

std::size_t TrainingGraphBuilder::joinColumnParts(std::size_t v) {
  const auto it = columnParts_.find(v);
  if (it == columnParts_.end()) return kNone;
  const Value whole = g_.values[v];  // a copy: value() grows the list
  const std::uint64_t rows = it->second.rows, columns = whole.numElements() / rows;
  Op concat{OpKind::Concat, "grad_concat", whole.layer, {}, {}};
  concat.rows = rows;
  std::uint64_t at = 0;
  for (const auto& [offset, part] : it->second.at) {
    if (offset != at) break;
    concat.inputs.push_back(part);
    concat.blocks.push_back(g_.values[part].numElements() / rows);
    at += concat.blocks.back();
  }
  if (at != columns)
    throw std::logic_error("TrainingGraphBuilder: the column gradients of '" + whole.name + "' cover " +
                           std::to_string(at) + " of its " + std::to_string(columns) + " columns in order");
  columnParts_.erase(it);
  if (concat.inputs.size() == 1 && g_.values[concat.inputs[0]].shape == whole.shape) return concat.inputs[0];
  const std::size_t joined =
      value(whole.name + "_grad", whole.shape, g_.values[concat.inputs[0]].dtype, ValueKind::Gradient, whole.layer);
  concat.outputs = {joined};
  g_.addOp(concat);
  return joined;
}

bool Backward::wants(std::size_t input) const { return b.dependsOnWeights(input); }

bool Backward::trains(std::size_t weight) const { return b.trains(weight); }

std::size_t TrainingGraphBuilder::maskOf(std::size_t v) const {
  const auto it = masks_.find(v);
  return it == masks_.end() ? kNoMask : it->second;
}

void Backward::deliverColumns(std::size_t input, std::size_t gradient, std::uint64_t offset, std::uint64_t rows) const {
  if (!wants(input) && b.g_.values[input].kind != ValueKind::Weight) return;
  auto& parts = b.columnParts_[input];
  parts.rows = rows ? rows : b.g_.values[input].shape.at(0);
  const auto [it, first] = parts.at.emplace(offset, gradient);
  if (first) return;
  // Another read of the same columns (a weight's slice, once per step): the sum.
  const Value part = b.g_.values[gradient];
  const std::size_t sum = b.value(part.name + "_sum", part.shape, part.dtype, ValueKind::Gradient, part.layer);
  b.g_.addOp({OpKind::Add, "grad_sum", part.layer, {it->second, gradient}, {sum}});
  it->second = sum;
}

void Backward::deliver(std::size_t input, std::size_t gradient) const {
  if (wants(input)) b.accumulate(input, gradient);
}

void Backward::weightGradient(std::size_t weight, std::size_t gradient) const {
  if (!trains(weight))  // (a frozen layer's backward computes no weight gradient)
    throw std::logic_error("internal: a gradient for " + b.g_.values[weight].name +
                           ", which is not a trainable weight");
  const auto [it, first] = b.weightGrad_.emplace(weight, gradient);
  if (first) return;
  // A shared layer's weight: the sum of its calls' gradients.
  const Value w = b.g_.values[weight];  // a copy: value() grows the list
  const std::size_t sum = b.value(w.name + "_grad_sum", w.shape, b.g_.values[gradient].dtype, ValueKind::Gradient, w.layer);
  b.g_.addOp({OpKind::Add, "grad_sum", w.layer, {it->second, gradient}, {sum}});
  it->second = sum;
}

// ---- the training step ----

std::uint64_t dropoutSeed(const Workload& w, std::size_t layer) {
  const LayerSpec& l = w.layers.at(layer);
  // 53 bits: the seed travels to the vertices as a double parameter.
  return (l.seeded ? l.seed : mixSeed(w.seed, layer)) & ((1ull << 53) - 1);
}

namespace {

// The one mask of layer `l`'s inputs (Keras's masks: TrainingGraphBuilder::
// maskOf), kNone without one; a layer that does not model masks gets none.
std::size_t inputMask(const TrainingGraphBuilder& b, const LayerSpec& l, const Layer& layer,
                      const std::vector<std::size_t>& ins) {
  std::size_t mask = kNone;
  for (std::size_t in : ins) {
    const std::size_t m = b.maskOf(in);
    if (m == kNone) continue;
    if (mask != kNone && m != mask)
      throw std::invalid_argument("layer '" + l.name + "' (" + l.kind + "): its inputs carry two different "
                                  "masks (of Embeddings' mask_zero or Masking layers); combining masks is not modelled");
    mask = m;
  }
  if (mask != kNone && layer.maskUse(l) == Layer::MaskUse::Refuses)
    throw std::invalid_argument("layer '" + l.name + "' (" + l.kind + "): its input carries Keras's mask (an "
                                "Embedding's mask_zero or a Masking layer's), which this layer does not model (Keras 3 "
                                "drops the mask here, Keras 2 raises); masks are modelled through Dense, Dropout, "
                                "Activation, LayerNormalization and the merges, into the recurrent layers, "
                                "MultiHeadAttention, GlobalAveragePooling1D and the loss");
  return mask;
}

}  // namespace

namespace {

// What the errors below name: a Keras model's file (the workload's file is
// named by its reader), else the workload; and where the layers are listed.
struct ModelOrigin {
  std::string file, layersKey;
  explicit ModelOrigin(const Workload& w)
      : file(w.kerasModel.empty() ? w.name : w.kerasModel), layersKey(w.kerasModel.empty() ? "model.layers: " : "") {}
};

// The layers' forward ops, in the model's (topological) order, on the
// model's inputs (modelInputValues): each layer's output value.
std::vector<std::size_t> addForwardPass(TrainingGraphBuilder& b, const ModelOrigin& origin) {
  const Workload& w = b.workload();
  const std::vector<std::size_t> inputs = modelInputValues(b);
  std::vector<std::size_t> outputOf(w.layers.size(), kNone);
  bool weights = false;
  for (std::size_t li = 0; li < w.layers.size(); ++li) {
    const LayerSpec& l = w.layers[li];
    std::vector<std::size_t> ins;
    for (std::size_t j : l.inputs.empty() ? std::vector<std::size_t>{li ? li - 1 : kModelInput} : l.inputs)
      ins.push_back(isModelInput(j) ? inputs.at(modelInputIndex(j)) : outputOf.at(j));
    const Layer& layer = layerOfKind(l.kind);
    weights = weights || layer.hasWeights(l);
    try {
      const std::size_t mask = inputMask(b, l, layer, ins);
      outputOf[li] = layer.build(b, l, li, ins);
      if (mask != kNone && layer.maskUse(l) == Layer::MaskUse::Carries) b.setMask(outputOf[li], mask);
      b.penalizeActivity(l, outputOf[li]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(origin.file + ": " + e.what());
    }
  }
  if (!weights) throw std::invalid_argument(origin.file + ": " + origin.layersKey + "needs at least one layer with weights");
  return outputOf;
}

// The model's outputs as the loss reads them ({output rows, gradient} per
// output: the gradients empty outside training); sets g.loss and g.outfeed.
struct ModelLoss {
  std::vector<std::size_t> outputs, grads;
};
ModelLoss addModelLoss(TrainingGraphBuilder& b, const std::vector<std::size_t>& outputOf, const ModelOrigin& origin) {
  const Workload& w = b.workload();
  const std::uint64_t batch = b.batch();
  ModelLoss loss;
  std::vector<std::uint64_t> features;
  std::vector<std::string> names;
  std::size_t outputMask = kNone;
  for (std::size_t o : modelOutputs(w)) {
    if (b.maskOf(outputOf.at(o)) != kNone)
      outputMask = checkedOutputMask(b, w.layers[o], b.maskOf(outputOf.at(o)), origin.file + ": " + origin.layersKey);
    // The loss reads rows of the output's elements (a value may still be laid
    // out as its layer computed it: [batch, 1, 1, classes] from a 1x1 convolution).
    // (A sequence's per-step classes: a row per step, DatasetSpec::labelSteps.)
    const std::uint64_t steps = w.dataset.labelSteps;
    loss.outputs.push_back(b.reshape(outputOf.at(o), {batch * steps, elementsOf(w.layers[o].outputShape) / steps},
                                     w.layers[o].name, "output_rows"));
    features.push_back(elementsOf(w.layers[o].outputShape) / steps);
    names.push_back(w.layers[o].name);
    if (features.back() != w.loss.targetWidth(w.dataset.classes))
      throw std::invalid_argument(origin.file + ": " + origin.layersKey + "the output layer ('" + w.layers[o].name +
                                  "') has " + std::to_string(features.back()) + " units but the dataset has " +
                                  std::to_string(w.dataset.classes) + " classes");
  }
  loss.grads = addLoss(b, loss.outputs, features, names, outputMask);
  return loss;
}

// Fit's validation pass (ValidationSpec, OpGraph::firstValidationOp): the
// forward pass again as evaluate builds it (training=False), its loss,
// metrics and penalties (the weights' and its own outputs'), after every op
// of the training step. Its values and ops are named "validation/...".
void addValidationPass(TrainingGraphBuilder& b, const ModelOrigin& origin) {
  OpGraph& g = b.graph();
  const std::size_t firstOp = g.ops.size(), firstValue = g.values.size();
  const std::size_t trainingLoss = g.loss;
  const std::vector<std::string> trainingOutfeed = g.outfeed;
  const std::size_t trainingPenalties = b.penalties().size();
  b.setTraining(false);
  addModelLoss(b, addForwardPass(b, origin), origin);
  std::vector<Penalty> penalties;
  for (std::size_t i = 0; i < b.penalties().size(); ++i)
    if (i >= trainingPenalties || !b.penalties()[i].activity) penalties.push_back(b.penalties()[i]);
  addRegularization(g, penalties);
  b.setTraining(true);
  g.validationLoss = g.loss;
  g.validationOutfeed = g.outfeed;
  g.loss = trainingLoss;
  g.outfeed = trainingOutfeed;
  g.firstValidationOp = firstOp;
  for (std::size_t v = firstValue; v < g.values.size(); ++v) g.values[v].name = "validation/" + g.values[v].name;
  for (std::size_t op = firstOp; op < g.ops.size(); ++op) g.ops[op].name = "validation/" + g.ops[op].name;
  // After the whole training step: its last ops before the pass's first.
  std::vector<std::size_t> trainingSinks, validationSources;
  for (std::size_t op = 0; op < g.ops.size(); ++op) {
    if (op < firstOp && boost::out_degree(op, g.graph) == 0) trainingSinks.push_back(op);
    if (op >= firstOp && boost::in_degree(op, g.graph) == 0) validationSources.push_back(op);
  }
  for (std::size_t before : trainingSinks)
    for (std::size_t after : validationSources) g.addOrderEdge(before, after);
}

}  // namespace

OpGraph buildTrainingGraph(const Workload& w) {
  using ir::DType;
  TrainingGraphBuilder b(w);
  OpGraph& g = b.graph();
  const std::uint64_t batch = b.batch();
  std::vector<std::uint64_t> imagesShape{batch};
  for (std::uint64_t d : w.inputs.size() > 1 ? std::vector<std::uint64_t>{w.dataset.features} : imageShape(w))
    imagesShape.push_back(d);
  g.images = b.value("images", imagesShape, w.dataset.vocabulary ? DType::Int : DType::Float, ValueKind::Input, "input");
  // Class indices, or the classes one-hot encoded as float targets (LossSpec::classIndexLabels).
  // (None in predict.)
  g.labels = kNone;
  if (w.task != Task::Predict)
    g.labels = w.loss.classIndexLabels()
                   ? b.value("labels", {batch * w.dataset.labelSteps}, DType::Int, ValueKind::Input, "input")
                   : b.value("labels", {batch, w.loss.targetWidth(w.dataset.classes)}, DType::Float, ValueKind::Input, "input");
  if (b.training() && w.optimizer.readsStepCount()) b.stepCounter();  // bias corrections and schedules read it

  const ModelOrigin origin(w);
  const std::vector<std::size_t> outputOf = addForwardPass(b, origin);
  if (w.task == Task::Predict) {
    addPredictions(b, outputOf);
    return std::move(g);
  }
  const ModelLoss loss = addModelLoss(b, outputOf, origin);
  addRegularization(g, b.penalties());
  if (!b.training()) return std::move(g);  // evaluate: the loss, metrics and penalties, as Keras's
  std::vector<std::pair<std::size_t, std::size_t>> seeds;
  for (std::size_t k = 0; k < loss.outputs.size(); ++k) seeds.emplace_back(loss.outputs[k], loss.grads[k]);
  const std::size_t firstBackwardOp = g.ops.size();
  std::map<std::size_t, std::size_t> weightGrad = b.backward(seeds);
  addWeightPenaltyGradients(g, b.penalties(), weightGrad);
  // The optimizer: one update per weight, after every reader of the weight.
  addOptimizerUpdates(g, w.optimizer, weightGrad, [&] { return b.stepCounter(); }, w.training.offloadOptimizerState);
  if (w.training.replicatedOptimizerStateSharding) g.optimizerStateShards = replicasOf(w);
  // The step count is incremented before anything reads it.
  if (g.stepCounter != kNone) {
    std::size_t increment = kNone;
    for (std::size_t op = 0; op < g.ops.size() && increment == kNone; ++op)
      if (g.ops[op].kind == OpKind::IncrementStep) increment = op;
    for (std::size_t op = 0; op < g.ops.size(); ++op)
      if (op != increment)
        for (std::size_t in : g.ops[op].inputs)
          if (in == g.stepCounter) g.addOrderEdge(increment, op);
  }
  // Recomputation asked for that finds no activation to recompute (every one
  // the backward pass reads is a checkpoint's, a stage's input or the
  // model's input) is said, not claimed: the summaries said "recomputing".
  if (recomputes(w))
    for (const auto& uncut : recomputeSegments(w).cuttingNothing)
      g.warnings.push_back("the recomputation checkpoint at layer '" + uncut.layer + "' cuts nothing: " + uncut.why);
  if (addRecomputation(g, w, firstBackwardOp) == 0 && recomputes(w)) {
    const std::string key = w.pipeline.enabled() ? "pipeline.recomputation_mode " + w.pipeline.recomputationMode
                                                 : std::string("training.recompute_checkpoints");
    g.warnings.push_back(key + ": no op is recomputed (every activation the backward pass reads is kept: a checkpoint's "
                         "output, a stage's input or the model's input)");
  }
  if (w.training.validation.enabled()) addValidationPass(b, origin);
  return std::move(g);
}

}  // namespace ipusim::scheduler
