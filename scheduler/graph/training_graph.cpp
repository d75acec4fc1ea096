#include "scheduler/graph/training_graph.hpp"

#include "scheduler/graph/optimizer_updates.hpp"
#include "scheduler/layers/activation_functions.hpp"
#include "scheduler/layers/layer.hpp"

#include <cmath>
#include <stdexcept>

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

// The loss of the model's output `x` (computed in float whatever its type)
// into g.loss, with the accuracy beside it; returns the gradient of the loss
// w.r.t. `x` (the logits; the predictions for the mean squared error).
std::size_t addLoss(TrainingGraphBuilder& b, std::size_t x, std::uint64_t features) {
  using ir::DType;
  OpGraph& g = b.graph();
  const Workload& w = b.workload();
  const std::uint64_t batch = b.batch();
  const bool sparse = w.loss.classIndexLabels();
  const bool squared = w.loss.type == "mean_squared_error";
  const bool binary = w.loss.type == "binary_crossentropy";
  g.loss = b.value("loss", {w.loss.hasAccuracy() ? 2u : 1u}, DType::Float, ValueKind::Loss, "loss");
  const std::size_t perRow = b.value("loss/per_example", {batch}, DType::Float, ValueKind::Activation, "loss");
  std::size_t probs = kNone;
  const std::size_t grad = b.value("loss/logits_grad", {batch, features}, b.compute(), ValueKind::Gradient, "loss");
  if (sparse) {
    // Sparse categorical cross-entropy: with from_logits=false the last
    // layer's softmax is fused into it (as TF's Keras does: it takes the
    // softmax's logits), with from_logits=true the loss applies the softmax
    // itself: either way softmax and cross-entropy are one op.
    probs = b.value("loss/probs", {batch, features}, DType::Float, ValueKind::Activation, "loss");
    g.addOp({OpKind::SoftmaxCrossEntropy, "sparse_softmax_cross_entropy", "loss", {x, g.labels}, {probs, perRow}});
  } else {
    // Over one-hot targets: categorical cross-entropy (softmax fused),
    // binary cross-entropy (sigmoid fused; the mean over the classes), or the
    // mean squared error of the predictions.
    Op op{OpKind::RowLoss, w.loss.type, "loss", {x, g.labels}, {}};
    op.codelet = squared ? "SquaredError" : binary ? "SigmoidCrossEntropy" : "SoftmaxCrossEntropyDense";
    if (!squared) probs = b.value("loss/probs", {batch, features}, DType::Float, ValueKind::Activation, "loss");
    op.outputs = squared ? std::vector<std::size_t>{perRow} : std::vector<std::size_t>{probs, perRow};
    g.addOp(op);
  }
  Op mean{OpKind::MeanLoss, "mean", "loss", {perRow}, {g.loss}};
  mean.scale = 1.0 / double(batch);
  g.addOp(mean);
  // Accuracy, a metric beside the loss (Keras's sparse_categorical_accuracy,
  // categorical_accuracy or binary_accuracy), the batch mean in element 1.
  if (w.loss.hasAccuracy()) {
    const std::size_t correct = b.value("loss/correct", {batch}, DType::Float, ValueKind::Activation, "loss");
    if (sparse) {
      g.addOp({OpKind::Accuracy, "accuracy", "loss", {probs, g.labels}, {correct}});
    } else {
      Op op{OpKind::RowLoss, "accuracy", "loss", {probs, g.labels}, {correct}};
      op.codelet = binary ? "BinaryAccuracy" : "CategoricalAccuracy";
      g.addOp(op);
    }
    Op accuracy{OpKind::MeanLoss, "accuracy_mean", "loss", {correct, g.loss}, {}};
    accuracy.scale = 1.0 / double(batch);
    accuracy.index = 1;
    g.addOp(accuracy);
  }
  // The gradient w.r.t. the logits: (probabilities - targets) scaled by the
  // means the loss takes (1/batch; binary and squared error also average
  // over the classes, and the square brings a 2).
  if (sparse) {
    Op seed{OpKind::SoftmaxCrossEntropyGrad, "sparse_softmax_cross_entropy_grad", "loss", {probs, g.labels}, {grad}};
    seed.scale = 1.0 / double(batch);
    g.addOp(seed);
  } else {
    Op seed{OpKind::TargetDifference, w.loss.type + "_grad", "loss", {squared ? x : probs, g.labels}, {grad}};
    seed.scale = (squared ? 2.0 : 1.0) / double(batch) / (binary || squared ? double(features) : 1.0);
    g.addOp(seed);
  }
  return grad;
}

}  // namespace

// ---- the builder ----

TrainingGraphBuilder::TrainingGraphBuilder(const Workload& w)
    : w_(w),
      compute_(w.dtype == "float32" ? ir::DType::Float : ir::DType::Half),
      variables_(w.dtype == "float16" ? ir::DType::Half : ir::DType::Float) {}

std::size_t TrainingGraphBuilder::value(std::string name, std::vector<std::uint64_t> shape, ir::DType dtype,
                                        ValueKind kind, std::string layer, std::optional<ir::UniformInit> init,
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
                                         const WeightInit& init, double fill) {
  if (const std::size_t shared = sharedValue(l, name, shape); shared != kNone) return shared;
  const std::string& owner = l.weightsOwner();
  const std::size_t v =
      value(owner + "/" + name, std::move(shape), variables_, ValueKind::Weight, owner, init ? init() : std::nullopt, fill);
  g_.weights.push_back(v);
  layerValues_.emplace(owner + "/" + name, v);
  return v;
}

std::size_t TrainingGraphBuilder::state(const LayerSpec& l, const std::string& name, std::vector<std::uint64_t> shape,
                                        ir::DType dtype, double fill) {
  if (const std::size_t shared = sharedValue(l, name, shape); shared != kNone) return shared;
  const std::string& owner = l.weightsOwner();
  const std::size_t v = value(owner + "/" + name, std::move(shape), dtype, ValueKind::NonTrainable, owner, std::nullopt, fill);
  layerValues_.emplace(owner + "/" + name, v);
  return v;
}

void TrainingGraphBuilder::updatesInPlace(std::size_t state, std::size_t op) {
  const auto [it, first] = lastUpdate_.emplace(state, op);
  if (first) return;
  g_.addOrderEdge(it->second, op);
  it->second = op;
}

// Glorot uniform: U(-l, l), l = sqrt(6 / (fanIn + fanOut)), drawn when the
// executable is loaded (ir::UniformInit), from a seed per kernel: the
// workload seed and the kernel's position, mixed by splitmix64.
ir::UniformInit TrainingGraphBuilder::glorotUniform(std::uint64_t fanIn, std::uint64_t fanOut) {
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

std::size_t TrainingGraphBuilder::bias(const LayerSpec& l, std::size_t x) {
  if (!l.useBias) return x;
  const std::size_t bias = weight(l, "bias", {l.units});
  const std::size_t biasUsed = cast(bias, compute_, l.name + "/bias_cast", l.name, ValueKind::Activation);
  const std::size_t out = value(l.name + "/bias_add", g_.values[x].shape, compute_, ValueKind::Activation, l.name);
  g_.addOp({OpKind::AddBias, "bias_add", l.name, {x, biasUsed}, {out}});
  // The add passes the gradient through; the bias gradient sums it over every
  // dimension but the last (ReduceRows), in float, delivered in the variables' type.
  record({x}, out, true, [this, x, bias, layer = l.name, units = l.units](const Backward& bw) {
    const std::size_t db = value(layer + "/bias_grad", {units}, variables_, ValueKind::Gradient, layer);
    g_.addOp({OpKind::ReduceRows, "bias_grad", layer, {bw.grad}, {db}});
    bw.weightGradient(bias, db);
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

std::map<std::size_t, std::size_t> TrainingGraphBuilder::backward(std::size_t output, std::size_t outputGrad) {
  gradOf_[output] = outputGrad;
  for (std::size_t i = tape_.size(); i-- > 0;) {
    const Entry& e = tape_[i];
    const auto found = gradOf_.find(e.output);
    if (found == gradOf_.end() || !dependsOnWeights(e.output)) continue;
    e.backward(Backward{*this, found->second});
  }
  return weightGrad_;
}

bool Backward::wants(std::size_t input) const { return b.dependsOnWeights(input); }

void Backward::deliver(std::size_t input, std::size_t gradient) const {
  if (wants(input)) b.accumulate(input, gradient);
}

void Backward::weightGradient(std::size_t weight, std::size_t gradient) const {
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

OpGraph buildTrainingGraph(const Workload& w) {
  using ir::DType;
  TrainingGraphBuilder b(w);
  OpGraph& g = b.graph();
  const std::uint64_t batch = b.batch();
  std::vector<std::uint64_t> imagesShape{batch};
  for (std::uint64_t d : imageShape(w)) imagesShape.push_back(d);
  g.images = b.value("images", imagesShape, DType::Float, ValueKind::Input, "input");
  // Class indices, or the classes one-hot encoded as float targets (LossSpec::classIndexLabels).
  g.labels = w.loss.classIndexLabels() ? b.value("labels", {batch}, DType::Int, ValueKind::Input, "input")
                                       : b.value("labels", {batch, w.dataset.classes}, DType::Float, ValueKind::Input, "input");
  if (w.optimizer.type == "adam") b.stepCounter();  // Adam's bias correction reads it

  // Forward, layer by layer in the model's (topological) order.
  const std::size_t x0 = b.cast(g.images, b.compute(), "input/cast", "input", ValueKind::Activation);
  std::vector<std::size_t> outputOf(w.layers.size(), kNone);
  bool weights = false;
  for (std::size_t li = 0; li < w.layers.size(); ++li) {
    const LayerSpec& l = w.layers[li];
    std::vector<std::size_t> ins;
    for (std::size_t j : l.inputs.empty() ? std::vector<std::size_t>{li ? li - 1 : kModelInput} : l.inputs)
      ins.push_back(j == kModelInput ? x0 : outputOf.at(j));
    const Layer& layer = layerOfKind(l.kind);
    weights = weights || layer.hasWeights(l);
    try {
      outputOf[li] = layer.build(b, l, li, ins);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(w.name + ": " + e.what());
    }
  }
  const std::size_t x = outputOf.back();
  const std::uint64_t features = elementsOf(w.layers.back().outputShape);
  if (!weights) throw std::invalid_argument(w.name + ": model.layers: needs at least one layer with weights");
  if (features != w.dataset.classes)
    throw std::invalid_argument(w.name + ": model.layers: the output layer ('" + w.layers.back().name + "') has " +
                                std::to_string(features) + " units but the dataset has " +
                                std::to_string(w.dataset.classes) + " classes");

  const std::size_t grad = addLoss(b, x, features);
  const std::map<std::size_t, std::size_t> weightGrad = b.backward(x, grad);
  // The optimizer: one update per weight, after every reader of the weight.
  addOptimizerUpdates(g, w.optimizer, weightGrad, [&] { return b.stepCounter(); });
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
  return std::move(g);
}

}  // namespace ipusim::scheduler
