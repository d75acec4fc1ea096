#include "scheduler/op_graph.hpp"

#include "scheduler/batch_norm_layer.hpp"
#include "scheduler/conv_layers.hpp"
#include "scheduler/merge_layers.hpp"
#include "scheduler/optimizer_updates.hpp"
#include "scheduler/padding_layers.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

namespace ipusim::scheduler {

namespace {
constexpr std::size_t npos = ~std::size_t(0);

// Glorot uniform: U(-l, l), l = sqrt(6 / (fanIn + fanOut)), drawn when the
// executable is loaded (ir::UniformInit), from a seed per kernel: the
// workload seed and the kernel's position, mixed by splitmix64.
ir::UniformInit glorotUniform(std::uint64_t fanIn, std::uint64_t fanOut, std::uint64_t seed, std::uint64_t kernel) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (kernel + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return {z ^ (z >> 31), std::sqrt(6.0 / double(fanIn + fanOut))};
}
}  // namespace

const char* toString(OpKind kind) {
  switch (kind) {
    case OpKind::MatMul: return "MatMul";
    case OpKind::AddBias: return "AddBias";
    case OpKind::Relu: return "Relu";
    case OpKind::ReluGrad: return "ReluGrad";
    case OpKind::SoftmaxCrossEntropy: return "SoftmaxCrossEntropy";
    case OpKind::SoftmaxCrossEntropyGrad: return "SoftmaxCrossEntropyGrad";
    case OpKind::ReduceRows: return "ReduceRows";
    case OpKind::MeanLoss: return "MeanLoss";
    case OpKind::Accuracy: return "Accuracy";
    case OpKind::RowLoss: return "RowLoss";
    case OpKind::TargetDifference: return "TargetDifference";
    case OpKind::SgdUpdate: return "SgdUpdate";
    case OpKind::Cast: return "Cast";
    case OpKind::NonLinearity: return "NonLinearity";
    case OpKind::NonLinearityGrad: return "NonLinearityGrad";
    case OpKind::IncrementStep: return "IncrementStep";
    case OpKind::Dropout: return "Dropout";
    case OpKind::DropoutGrad: return "DropoutGrad";
    case OpKind::MomentumUpdate: return "MomentumUpdate";
    case OpKind::AdamUpdate: return "AdamUpdate";
    case OpKind::RmspropUpdate: return "RmspropUpdate";
    case OpKind::Conv2D: return "Conv2D";
    case OpKind::Conv2DInputGrad: return "Conv2DInputGrad";
    case OpKind::Conv2DWeightGrad: return "Conv2DWeightGrad";
    case OpKind::MaxPool2D: return "MaxPool2D";
    case OpKind::MaxPool2DGrad: return "MaxPool2DGrad";
    case OpKind::AvgPool2D: return "AvgPool2D";
    case OpKind::AvgPool2DGrad: return "AvgPool2DGrad";
    case OpKind::Square: return "Square";
    case OpKind::Mul: return "Mul";
    case OpKind::BatchNormStatistics: return "BatchNormStatistics";
    case OpKind::BatchNormalise: return "BatchNormalise";
    case OpKind::BatchNormInputGrad: return "BatchNormInputGrad";
    case OpKind::Add: return "Add";
    case OpKind::Sub: return "Sub";
    case OpKind::Neg: return "Neg";
    case OpKind::Concat: return "Concat";
    case OpKind::Slice: return "Slice";
    case OpKind::Pad2D: return "Pad2D";
    case OpKind::Crop2D: return "Crop2D";
    case OpKind::Reshape: return "Reshape";
  }
  return "?";
}

std::size_t OpGraph::addValue(Value v) {
  values.push_back(std::move(v));
  producerOf.push_back(npos);
  return values.size() - 1;
}

std::size_t OpGraph::addOp(Op op) {
  const std::size_t id = boost::add_vertex(graph);
  for (std::size_t in : op.inputs)
    if (producerOf[in] != npos) boost::add_edge(producerOf[in], id, graph);
  for (std::size_t out : op.outputs) producerOf[out] = id;
  ops.push_back(std::move(op));
  return id;
}

void OpGraph::addOrderEdge(std::size_t before, std::size_t after) {
  if (!boost::edge(before, after, graph).second) boost::add_edge(before, after, graph);
}

void OpGraph::checkTopological(const std::vector<std::size_t>& order) const {
  if (order.size() != ops.size()) throw std::logic_error("schedule does not contain every op once");
  std::vector<std::size_t> position(ops.size(), npos);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] >= ops.size() || position[order[i]] != npos) throw std::logic_error("schedule repeats an op");
    position[order[i]] = i;
  }
  for (auto [e, end] = boost::edges(graph); e != end; ++e)
    if (position[boost::source(*e, graph)] > position[boost::target(*e, graph)])
      throw std::logic_error("schedule runs " + ops[boost::target(*e, graph)].name + " before its input from " +
                             ops[boost::source(*e, graph)].name);
}

namespace {

// Keeps the dropout masks of two layers apart when the workload seed is
// shared: splitmix64 of the seed and the layer's position.
std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t salt) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (salt + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

bool isPooling(const LayerSpec& l) {
  namespace k = layer_kind;
  return l.kind == k::kMaxPooling2D || l.kind == k::kAveragePooling2D || l.kind == k::kGlobalAveragePooling2D ||
         l.kind == k::kGlobalMaxPooling2D;
}

bool isPaddingOrCropping(const LayerSpec& l) {
  namespace k = layer_kind;
  return l.kind == k::kZeroPadding1D || l.kind == k::kZeroPadding2D || l.kind == k::kCropping1D || l.kind == k::kCropping2D;
}

bool isSpatial(const LayerSpec& l) { return l.kind == layer_kind::kConv2D || isPooling(l) || isPaddingOrCropping(l); }

// The per-example shape the images are fed in: the model's input shape
// (height, width, channels) when the first layer that computes is a
// convolution or pooling, or a batch normalization over a channels axis of
// such an input (a reshape or flatten before it moves no element), else a
// flat vector of the dataset's features.
std::vector<std::uint64_t> imageShape(const Workload& w) {
  for (const LayerSpec& l : w.layers) {
    if (l.kind == layer_kind::kFlatten || l.kind == layer_kind::kReshape) continue;
    if (isSpatial(l) || (l.kind == layer_kind::kBatchNormalization && l.inputShape.size() > 1)) return l.inputShape;
    break;
  }
  return {w.dataset.features};
}

}  // namespace

std::uint64_t dropoutSeed(const Workload& w, std::size_t layer) {
  const LayerSpec& l = w.layers.at(layer);
  // 53 bits: the seed travels to the vertices as a double parameter.
  return (l.seeded ? l.seed : mixSeed(w.seed, layer)) & ((1ull << 53) - 1);
}

OpGraph buildTrainingGraph(const Workload& w) {
  using ir::DType;
  namespace k = layer_kind;
  OpGraph g;
  const std::uint64_t batch = w.dataset.batchSize;
  // Keras's dtype policy: the compute type of every layer, and the variables'.
  const DType compute = w.dtype == "float32" ? DType::Float : DType::Half;
  const DType variables = w.dtype == "float16" ? DType::Half : DType::Float;
  auto value = [&](std::string name, std::vector<std::uint64_t> shape, DType dtype, ValueKind kind, std::string layer,
                   std::optional<ir::UniformInit> init = std::nullopt) {
    return g.addValue({std::move(name), std::move(shape), dtype, kind, std::move(layer), init});
  };
  // `v` in dtype `to`: itself, or a Cast op's output named `name`.
  auto cast = [&](std::size_t v, DType to, const std::string& name, const std::string& layer, ValueKind kind) {
    if (g.values[v].dtype == to) return v;
    const std::size_t out = value(name, g.values[v].shape, to, kind, layer);
    g.addOp({OpKind::Cast, name.substr(name.find('/') + 1), layer, {v}, {out}});
    return out;
  };
  std::vector<std::uint64_t> imagesShape{batch};
  for (std::uint64_t d : imageShape(w)) imagesShape.push_back(d);
  g.images = value("images", imagesShape, DType::Float, ValueKind::Input, "input");
  // Class indices, or the classes one-hot encoded as float targets (LossSpec::classIndexLabels).
  g.labels = w.loss.classIndexLabels() ? value("labels", {batch}, DType::Int, ValueKind::Input, "input")
                                       : value("labels", {batch, w.dataset.classes}, DType::Float, ValueKind::Input, "input");
  // The model's last sigmoid is fused into a binary cross-entropy as its
  // softmax is into a categorical one (TF's Keras takes their logits).
  const bool binary = w.loss.type == "binary_crossentropy";
  // The step counter, when Adam or a dropout reads it: incremented first in every step.
  std::size_t incrementOp = ~std::size_t(0);
  auto stepCounter = [&] {
    if (g.stepCounter == ~std::size_t(0)) {
      g.stepCounter = value("iterations", {1}, DType::Int, ValueKind::StepCounter, "training");
      incrementOp = g.addOp({OpKind::IncrementStep, "increment", "training", {g.stepCounter}, {}});
    }
    return g.stepCounter;
  };
  if (w.optimizer.type == "adam") stepCounter();

  // Forward, layer by layer in the model's (topological) order. Each op
  // whose gradient the backward pass builds is recorded on a tape, in order.
  struct Record {
    enum Kind { Dense, Conv, Pool, Activation, Dropout, BatchNorm, Merge, Padding, Reshape } kind;
    std::string layer;
    std::size_t input = 0, output = 0;             // the op's (first) input and output values
    std::vector<std::size_t> inputs{};             // Merge: every input
    std::string merge{};                           // Merge: the layer kind (add, subtract, ...)
    std::size_t kernel = 0, bias = 0, kernelUsed = 0;  // Dense, Conv (bias npos without one)
    std::size_t op = 0;                            // Conv, Pool, Merge: the op (Merge: concatenate's)
    scheduler::Activation activation = scheduler::Activation::Linear;
    double rate = 0;
    std::uint64_t seed = 0;
    BatchNormForward batchNorm{};
  };
  constexpr std::size_t npos = ~std::size_t(0);
  std::vector<Record> tape;
  // Per value: whether it depends on a trainable weight (only those need a gradient).
  std::vector<char> needsGrad;
  auto dependsOnWeights = [&](std::size_t v) { return v < needsGrad.size() && needsGrad[v]; };
  auto record = [&](Record r, bool weighted) {
    bool depends = weighted;
    for (std::size_t in : r.inputs.empty() ? std::vector<std::size_t>{r.input} : r.inputs) depends |= dependsOnWeights(in);
    needsGrad.resize(g.values.size(), 0);
    needsGrad[r.output] = depends;
    tape.push_back(std::move(r));
  };
  const std::size_t x0 = cast(g.images, compute, "input/cast", "input", ValueKind::Activation);
  std::vector<std::size_t> outputOf(w.layers.size(), npos);  // per layer: its output value
  std::size_t x = x0;
  std::size_t denseCount = 0, kernelCount = 0;
  // A bias added over the last dimension of `x` (dense or conv output), cast to the compute type.
  auto addBias = [&](Record& r, const LayerSpec& l) {
    r.bias = npos;
    if (!l.useBias) return;
    r.bias = value(l.name + "/bias", {l.units}, variables, ValueKind::Weight, l.name);
    g.weights.push_back(r.bias);
    const std::size_t biasUsed = cast(r.bias, compute, l.name + "/bias_cast", l.name, ValueKind::Activation);
    const std::size_t out = value(l.name + "/bias_add", g.values[r.output].shape, compute, ValueKind::Activation, l.name);
    g.addOp({OpKind::AddBias, "bias_add", l.name, {r.output, biasUsed}, {out}});
    r.output = out;
  };
  auto applyActivation = [&](const LayerSpec& l, scheduler::Activation a) {
    const std::vector<std::uint64_t> shape = g.values[x].shape;
    if (a == scheduler::Activation::Linear || a == scheduler::Activation::Softmax) return;  // softmax: fused with the loss
    if (binary && a == scheduler::Activation::Sigmoid && &l == &w.layers.back()) return;  // fused likewise
    const std::string name = toString(a);
    const std::size_t out = value(l.name + "/" + name, shape, compute, ValueKind::Activation, l.name);
    Op op{a == scheduler::Activation::Relu ? OpKind::Relu : OpKind::NonLinearity, name, l.name, {x}, {out}};
    op.activation = a;
    g.addOp(op);
    Record r{Record::Activation, l.name, x, out};
    r.activation = a;
    record(r, false);
    x = out;
  };
  for (std::size_t li = 0; li < w.layers.size(); ++li) {
    const LayerSpec& l = w.layers[li];
    std::vector<std::size_t> ins;
    for (std::size_t j : l.inputs.empty() ? std::vector<std::size_t>{li ? li - 1 : kModelInput} : l.inputs)
      ins.push_back(j == kModelInput ? x0 : outputOf.at(j));
    x = ins[0];
    const auto finish = [&] { outputOf[li] = x; };
    if (l.kind == k::kFlatten || l.kind == k::kReshape) {  // row-major: the same elements
      finish();
      continue;
    }
    if (isSpatial(l) || (l.kind == k::kBatchNormalization && l.inputShape.size() > 1)) {
      // The value in hand must be the layer's NHWC input (batch
      // normalization's statistics are per channel: its channels must be the
      // value's last axis). A flatten or reshape moves no element and makes
      // no op; where a layer needs the new shape, a Reshape op gives the
      // same tensor that shape (and its gradient the old one back).
      std::vector<std::uint64_t> expected{batch};
      expected.insert(expected.end(), l.inputShape.begin(), l.inputShape.end());
      if (g.values[x].shape != expected) {
        const std::size_t out = value(l.name + "/reshaped_input", expected, g.values[x].dtype, ValueKind::Activation, l.name);
        g.addOp({OpKind::Reshape, "reshape_input", l.name, {x}, {out}});
        record(Record{Record::Reshape, l.name, x, out}, false);
        x = out;
      }
    }
    if (isMerge(l.kind)) {
      x = addMerge(g, l, ins, batch);
      Record r{Record::Merge, l.name, ins[0], x};
      r.inputs = ins;
      r.merge = l.kind;
      r.op = g.ops.size() - 1;
      record(r, false);
      finish();
      continue;
    }
    if (isPaddingOrCropping(l)) {
      Record r{Record::Padding, l.name, x};
      r.output = addPaddingOrCropping(g, l, x, batch);
      r.op = g.ops.size() - 1;
      x = r.output;
      record(r, false);
      finish();
      continue;
    }
    if (l.kind == k::kConv2D) {
      // Glorot uniform with Keras's fans: kernel rows x columns x input channels (filters).
      const std::uint64_t channels = l.inputShape.back(), field = std::uint64_t(l.window[0]) * l.window[1];
      Record c{Record::Conv, l.name, x};
      c.kernel = value(l.name + "/kernel", {l.window[0], l.window[1], channels, l.units}, variables, ValueKind::Weight,
                       l.name, glorotUniform(field * channels, field * l.units, w.seed, kernelCount++));
      g.weights.push_back(c.kernel);
      c.kernelUsed = cast(c.kernel, compute, l.name + "/kernel_cast", l.name, ValueKind::Activation);
      try {
        c.output = addConv2D(g, x, c.kernelUsed, windowOf(l), l.name);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(w.name + ": " + e.what());
      }
      c.op = g.ops.size() - 1;
      addBias(c, l);
      x = c.output;
      record(c, true);
      applyActivation(l, l.activation);
      finish();
      continue;
    }
    if (isPooling(l)) {
      const bool max = l.kind == k::kMaxPooling2D || l.kind == k::kGlobalMaxPooling2D;
      Record p{Record::Pool, l.name, x};
      try {
        p.output = max ? addMaxPool2D(g, x, windowOf(l), l.name) : addAvgPool2D(g, x, windowOf(l), l.name);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(w.name + ": " + e.what());
      }
      p.op = g.ops.size() - 1;
      x = p.output;
      record(p, false);
      finish();
      continue;
    }
    if (l.kind == k::kBatchNormalization) {
      Record r{Record::BatchNorm, l.name, x};
      r.batchNorm = addBatchNorm(g, x, l, compute, variables);
      r.output = r.batchNorm.output;
      x = r.output;
      record(r, r.batchNorm.gamma != npos || r.batchNorm.beta != npos);
      finish();
      continue;
    }
    if (l.kind == k::kActivation) {
      applyActivation(l, l.activation);
      finish();
      continue;
    }
    if (l.kind == k::kDropout) {
      if (l.rate == 0) {
        finish();
        continue;
      }
      const std::size_t out = value(l.name + "/dropout", g.values[x].shape, compute, ValueKind::Activation, l.name);
      Op op{OpKind::Dropout, "dropout", l.name, {x, stepCounter()}, {out}};
      op.rate = l.rate;
      op.seed = dropoutSeed(w, li);
      g.addOp(op);
      Record r{Record::Dropout, l.name, x, out};
      r.rate = op.rate, r.seed = op.seed;
      record(r, false);
      x = out;
      finish();
      continue;
    }
    // dense: a MatMul reads an NHWC input (after a flatten) as [batch,
    // height x width x channels]. On an input of rank > 1 (Keras's Dense on
    // the last axis) every row of the last axis is a row of the product:
    // the value reshaped to [rows, features], the result back to the layer's
    // output shape.
    const std::uint64_t features = l.inputShape.back();
    const std::uint64_t rows = batch * (elementsOf(l.inputShape) / features);
    auto reshape = [&](std::vector<std::uint64_t> shape, const char* name) {
      if (g.values[x].shape == shape) return;
      const std::size_t out = value(l.name + "/" + name, std::move(shape), g.values[x].dtype, ValueKind::Activation, l.name);
      g.addOp({OpKind::Reshape, name, l.name, {x}, {out}});
      record(Record{Record::Reshape, l.name, x, out}, false);
      x = out;
    };
    if (l.inputShape.size() > 1) reshape({rows, features}, "rows");
    Record d{Record::Dense, l.name, x};
    ++denseCount;
    d.kernel = value(l.name + "/kernel", {features, l.units}, variables, ValueKind::Weight, l.name,
                     glorotUniform(features, l.units, w.seed, kernelCount++));
    g.weights.push_back(d.kernel);
    d.kernelUsed = cast(d.kernel, compute, l.name + "/kernel_cast", l.name, ValueKind::Activation);
    const std::size_t mm = value(l.name + "/matmul", {rows, l.units}, compute, ValueKind::Activation, l.name);
    g.addOp({OpKind::MatMul, "matmul", l.name, {x, d.kernelUsed}, {mm}});
    d.output = mm;
    addBias(d, l);
    x = d.output;
    record(d, true);
    if (l.inputShape.size() > 1) {
      std::vector<std::uint64_t> shape{batch};
      shape.insert(shape.end(), l.outputShape.begin(), l.outputShape.end());
      reshape(shape, "unrows");
    }
    applyActivation(l, l.activation);
    finish();
  }
  x = outputOf.back();
  const std::uint64_t features = elementsOf(w.layers.back().outputShape);
  if (!denseCount) throw std::invalid_argument(w.name + ": model.layers: needs at least one dense layer");
  if (features != w.dataset.classes)
    throw std::invalid_argument(w.name + ": model.layers: the output layer ('" + w.layers.back().name + "') has " +
                                std::to_string(features) + " units but the dataset has " +
                                std::to_string(w.dataset.classes) + " classes");

  // The loss, computed in float whatever the logits' type, and its gradient
  // w.r.t. the logits (predictions for mean squared error), in `grad`.
  const bool sparse = w.loss.classIndexLabels();
  const bool squared = w.loss.type == "mean_squared_error";
  g.loss = value("loss", {w.loss.hasAccuracy() ? 2u : 1u}, DType::Float, ValueKind::Loss, "loss");
  const std::size_t perRow = value("loss/per_example", {batch}, DType::Float, ValueKind::Activation, "loss");
  std::size_t probs = npos;
  std::size_t grad = value("loss/logits_grad", {batch, features}, compute, ValueKind::Gradient, "loss");
  if (sparse) {
    // Sparse categorical cross-entropy: with from_logits=false the last
    // layer's softmax is fused into it (as TF's Keras does: it takes the
    // softmax's logits), with from_logits=true the loss applies the softmax
    // itself: either way softmax and cross-entropy are one op.
    probs = value("loss/probs", {batch, features}, DType::Float, ValueKind::Activation, "loss");
    g.addOp({OpKind::SoftmaxCrossEntropy, "sparse_softmax_cross_entropy", "loss", {x, g.labels}, {probs, perRow}});
  } else {
    // Over one-hot targets: categorical cross-entropy (softmax fused),
    // binary cross-entropy (sigmoid fused; the mean over the classes), or the
    // mean squared error of the predictions.
    Op op{OpKind::RowLoss, w.loss.type, "loss", {x, g.labels}, {}};
    op.codelet = squared ? "SquaredError" : binary ? "SigmoidCrossEntropy" : "SoftmaxCrossEntropyDense";
    if (!squared) probs = value("loss/probs", {batch, features}, DType::Float, ValueKind::Activation, "loss");
    op.outputs = squared ? std::vector<std::size_t>{perRow} : std::vector<std::size_t>{probs, perRow};
    g.addOp(op);
  }
  Op mean{OpKind::MeanLoss, "mean", "loss", {perRow}, {g.loss}};
  mean.scale = 1.0 / double(batch);
  g.addOp(mean);
  // Accuracy, a metric beside the loss (Keras's sparse_categorical_accuracy,
  // categorical_accuracy or binary_accuracy), the batch mean in element 1.
  if (w.loss.hasAccuracy()) {
    const std::size_t correct = value("loss/correct", {batch}, DType::Float, ValueKind::Activation, "loss");
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

  // Autodiff, in reverse layer order, from the loss gradient w.r.t. the
  // logits: (probabilities - targets) scaled by the means the loss takes
  // (1/batch; binary and squared error also average over the classes, and
  // the square brings a 2).
  if (sparse) {
    Op seed{OpKind::SoftmaxCrossEntropyGrad, "sparse_softmax_cross_entropy_grad", "loss", {probs, g.labels}, {grad}};
    seed.scale = 1.0 / double(batch);
    g.addOp(seed);
  } else {
    Op seed{OpKind::TargetDifference, w.loss.type + "_grad", "loss", {squared ? x : probs, g.labels}, {grad}};
    seed.scale = (squared ? 2.0 : 1.0) / double(batch) / (binary || squared ? double(features) : 1.0);
    g.addOp(seed);
  }
  // Backward over the tape in reverse, each op's gradient from its output's;
  // a value read by several ops gets the sum of their gradients. Only values
  // that depend on a weight get one (nothing before the first layer with
  // weights).
  std::map<std::size_t, std::size_t> gradOf{{x, grad}};
  auto accumulate = [&](std::size_t v, std::size_t gv) {
    const auto [it, first] = gradOf.emplace(v, gv);
    if (first) return;
    const std::string layer = g.values[v].layer;
    const std::size_t sum = value(layer + "/grad_sum", g.values[gv].shape, compute, ValueKind::Gradient, layer);
    g.addOp({OpKind::Add, "grad_sum", layer, {it->second, gv}, {sum}});
    it->second = sum;
  };
  std::map<std::size_t, std::size_t> weightGrad;
  for (std::size_t i = tape.size(); i-- > 0;) {
    const Record& r = tape[i];
    const auto found = gradOf.find(r.output);
    if (found == gradOf.end() || !dependsOnWeights(r.output)) continue;
    const std::size_t grad = found->second;
    const bool wantInput = dependsOnWeights(r.input);
    const std::vector<std::uint64_t> shape = g.values[r.input].shape;  // a copy: addValue reallocates
    if (r.kind == Record::Merge) {
      addMergeGrad(g, r.merge, g.ops[r.op], r.inputs, grad, [&](std::size_t in) { return dependsOnWeights(in); },
                   [&](std::size_t in, std::size_t gv) { accumulate(in, gv); });
      continue;
    }
    if (r.kind == Record::Activation) {
      const std::string name = std::string(toString(r.activation)) + "_grad";
      const std::size_t pre = value(r.layer + "/" + name, shape, compute, ValueKind::Gradient, r.layer);
      // relu, sigmoid and tanh read their output; gelu its input.
      const std::size_t reads = r.activation == scheduler::Activation::Gelu ? r.input : r.output;
      Op op{r.activation == scheduler::Activation::Relu ? OpKind::ReluGrad : OpKind::NonLinearityGrad, name, r.layer,
            {reads, grad}, {pre}};
      op.activation = r.activation;
      g.addOp(op);
      accumulate(r.input, pre);
      continue;
    }
    if (r.kind == Record::Dropout) {
      const std::size_t pre = value(r.layer + "/dropout_grad", shape, compute, ValueKind::Gradient, r.layer);
      Op op{OpKind::DropoutGrad, "dropout_grad", r.layer, {grad, stepCounter()}, {pre}};
      op.rate = r.rate, op.seed = r.seed;
      g.addOp(op);
      accumulate(r.input, pre);
      continue;
    }
    if (r.kind == Record::Pool) {
      accumulate(r.input, addPool2DGrad(g, r.op, grad));
      continue;
    }
    if (r.kind == Record::Reshape) {
      const std::size_t back = value(r.layer + "/reshaped_input_grad", shape, compute, ValueKind::Gradient, r.layer);
      g.addOp({OpKind::Reshape, "reshape_input_grad", r.layer, {grad}, {back}});
      accumulate(r.input, back);
      continue;
    }
    if (r.kind == Record::Padding) {
      accumulate(r.input, addPaddingOrCroppingGrad(g, r.op, grad));
      continue;
    }
    if (r.kind == Record::BatchNorm) {
      const std::size_t dx = addBatchNormGrad(g, r.batchNorm, grad, wantInput, weightGrad);
      if (wantInput) accumulate(r.input, dx);
      continue;
    }
    const std::vector<std::uint64_t> kshape = g.values[r.kernel].shape;
    // The bias add passes the gradient through; the bias gradient sums rows
    // (an NHWC gradient: every dimension but the last), accumulated in float,
    // delivered in the variables' type.
    if (r.bias != npos) {
      const std::size_t db = value(r.layer + "/bias_grad", {kshape.back()}, variables, ValueKind::Gradient, r.layer);
      g.addOp({OpKind::ReduceRows, "bias_grad", r.layer, {grad}, {db}});
      weightGrad[r.bias] = db;
    }
    if (r.kind == Record::Conv) {
      const Conv2DGradients grads = addConv2DGrad(g, r.op, grad, wantInput, variables);
      weightGrad[r.kernel] = grads.kernel;
      if (wantInput) accumulate(r.input, grads.input);
      continue;
    }
    // dKernel = input^T . grad (input stored batch x in: transposed a), its
    // partials in float, delivered in the variables' type.
    const std::size_t dk = value(r.layer + "/kernel_grad", kshape, variables, ValueKind::Gradient, r.layer);
    Op dkOp{OpKind::MatMul, "kernel_grad", r.layer, {r.input, grad}, {dk}};
    dkOp.transposeA = true;
    g.addOp(dkOp);
    weightGrad[r.kernel] = dk;
    if (wantInput) {  // dInput = grad . kernel^T (kernel stored in x out: transposed b), in the input's shape
      const std::size_t dx = value(r.layer + "/input_grad", shape, compute, ValueKind::Gradient, r.layer);
      Op dxOp{OpKind::MatMul, "input_grad", r.layer, {grad, r.kernelUsed}, {dx}};
      dxOp.transposeB = true;
      g.addOp(dxOp);
      accumulate(r.input, dx);
    }
  }

  // The optimizer: one update per weight, after every reader of the weight.
  addOptimizerUpdates(g, w.optimizer, weightGrad, [&] { return stepCounter(); });
  // The step count is incremented before anything reads it.
  if (incrementOp != npos)
    for (std::size_t op = 0; op < g.ops.size(); ++op)
      if (op != incrementOp)
        for (std::size_t in : g.ops[op].inputs)
          if (in == g.stepCounter) g.addOrderEdge(incrementOp, op);
  return g;
}

}  // namespace ipusim::scheduler
