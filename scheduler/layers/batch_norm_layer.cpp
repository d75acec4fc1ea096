#include "scheduler/layers/batch_norm_layer.hpp"

namespace ipusim::scheduler {
namespace {

std::size_t addValue(OpGraph& g, const std::string& name, std::vector<std::uint64_t> shape, ir::DType dtype, ValueKind kind,
                     const std::string& layer, double fill = 0) {
  return g.addValue({name, std::move(shape), dtype, kind, layer, std::nullopt, fill});
}

// `v` as float: itself, or a Cast op's output.
std::size_t asFloat(OpGraph& g, std::size_t v, const std::string& name, const std::string& layer) {
  if (g.values[v].dtype == ir::DType::Float) return v;
  const std::size_t out = addValue(g, layer + "/" + name, g.values[v].shape, ir::DType::Float, ValueKind::Activation, layer);
  g.addOp({OpKind::Cast, name, layer, {v}, {out}});
  return out;
}

// The channels' sums of `in` (over every axis but the last) times `scale`, in float.
std::size_t channelSums(OpGraph& g, std::size_t in, const std::string& name, ValueKind kind, double scale,
                        const std::string& layer) {
  const std::uint64_t channels = g.values[in].shape.back();
  const std::size_t out = addValue(g, layer + "/" + name, {channels}, ir::DType::Float, kind, layer);
  Op op{OpKind::ReduceRows, name, layer, {in}, {out}};
  op.scale = scale;
  g.addOp(op);
  return out;
}

// gamma or beta: a weight starting at `fill` when trainable, else a fixed float value `fill`.
std::size_t parameter(TrainingGraphBuilder& b, const LayerSpec& l, const char* name, bool trainable, double fill,
                      std::size_t& weight) {
  const std::uint64_t c = l.outputShape.back();
  if (!trainable) return b.state(l, name, {c}, ir::DType::Float, fill);
  weight = b.weight(l, name, {c}, {}, fill);
  return asFloat(b.graph(), weight, std::string(name) + "_cast", l.name);
}

}  // namespace

BatchNormForward addBatchNorm(TrainingGraphBuilder& b, std::size_t input, const LayerSpec& l) {
  OpGraph& g = b.graph();
  const ir::DType compute = b.compute();
  BatchNormForward f;
  f.layer = l.name;
  f.input = input;
  const std::vector<std::uint64_t> shape = g.values[input].shape;
  const std::uint64_t channels = shape.back();
  const double perChannel = double(g.values[input].numElements() / channels);  // M
  // The batch statistics (popnn batchNormEstimates: the sums of x and x^2),
  // in training, unless the layer is frozen (Keras runs it in inference mode).
  const bool batchStatistics = b.training() && l.trainable;
  std::size_t mean = ~std::size_t(0), meanSquare = ~std::size_t(0);
  if (batchStatistics) {
    mean = channelSums(g, input, "mean", ValueKind::Activation, 1.0 / perChannel, l.name);
    const std::size_t square = addValue(g, l.name + "/square", shape, compute, ValueKind::Activation, l.name);
    g.addOp({OpKind::Square, "square", l.name, {input}, {square}});
    meanSquare = channelSums(g, square, "mean_square", ValueKind::Activation, 1.0 / perChannel, l.name);
  }
  // Keras's initializers: moving_mean zeros, moving_variance ones.
  f.movingMean = b.state(l, "moving_mean", {channels}, ir::DType::Float, 0.0);
  f.movingVariance = b.state(l, "moving_variance", {channels}, ir::DType::Float, 1.0);
  f.invStdDev = addValue(g, l.name + "/inv_std_dev", {channels}, ir::DType::Float, ValueKind::Activation, l.name);
  if (batchStatistics) {
    Op stats{OpKind::BatchNormStatistics, "statistics", l.name, {mean, meanSquare, f.movingMean, f.movingVariance}, {f.invStdDev}};
    stats.epsilon = l.epsilon;
    stats.momentum = l.momentum;
    g.addOp(stats);
    b.updatesInPlace(f.movingMean, g.ops.size() - 1);  // a shared layer's calls update them in turn
  } else {
    // Keras's call with training=False (evaluate, predict, a frozen layer): the moving
    // statistics whiten, and stay as they are (popnn batchNormalise with them).
    Op invStdDev{OpKind::BatchNormInvStdDev, "inv_std_dev", l.name, {f.movingVariance}, {f.invStdDev}};
    invStdDev.epsilon = l.epsilon;
    g.addOp(invStdDev);
    mean = f.movingMean;
  }
  // gamma (ones) and beta (zeros), Keras's default initializers.
  f.gammaUsed = parameter(b, l, "gamma", l.scale, 1.0, f.gamma);
  const std::size_t betaUsed = parameter(b, l, "beta", l.center, 0.0, f.beta);
  f.whitened = addValue(g, l.name + "/whitened", shape, compute, ValueKind::Activation, l.name);
  f.output = addValue(g, l.name + "/batch_normalization", shape, compute, ValueKind::Activation, l.name);
  g.addOp({OpKind::BatchNormalise, "normalise", l.name, {input, mean, f.invStdDev, f.gammaUsed, betaUsed},
           {f.whitened, f.output}});
  return f;
}

std::size_t addBatchNormGrad(OpGraph& g, const BatchNormForward& f, std::size_t outputGrad, bool wantInputGradient,
                             std::map<std::size_t, std::size_t>& weightGrad) {
  const std::string& layer = f.layer;
  const std::vector<std::uint64_t> shape = g.values[outputGrad].shape;
  const ir::DType compute = g.values[outputGrad].dtype;
  const std::uint64_t channels = shape.back();
  // popnn batchNormDeltas: betaDelta = sum(dy), gammaDelta = sum(dy * whitened), accumulated in float.
  const std::size_t betaDelta = channelSums(g, outputGrad, "beta_grad", ValueKind::Gradient, 1.0, layer);
  const std::size_t product = addValue(g, layer + "/grad_whitened", shape, compute, ValueKind::Gradient, layer);
  g.addOp({OpKind::Mul, "grad_whitened", layer, {outputGrad, f.whitened}, {product}});
  const std::size_t gammaDelta = channelSums(g, product, "gamma_grad", ValueKind::Gradient, 1.0, layer);
  // The weights' gradients in the weights' type (a float16 model's gamma and beta are half).
  auto deliver = [&](std::size_t weight, std::size_t delta, const char* name) {
    if (weight == ~std::size_t(0)) return;
    std::size_t grad = delta;
    if (g.values[weight].dtype != ir::DType::Float) {
      grad = addValue(g, layer + "/" + name, {channels}, g.values[weight].dtype, ValueKind::Gradient, layer);
      g.addOp({OpKind::Cast, name, layer, {delta}, {grad}});
    }
    weightGrad[weight] = grad;
  };
  deliver(f.gamma, gammaDelta, "gamma_grad_cast");
  deliver(f.beta, betaDelta, "beta_grad_cast");
  if (!wantInputGradient) return ~std::size_t(0);
  const std::size_t dx = addValue(g, layer + "/input_grad", shape, compute, ValueKind::Gradient, layer);
  Op op{OpKind::BatchNormInputGrad, "input_grad", layer, {outputGrad, f.whitened, gammaDelta, betaDelta, f.gammaUsed, f.invStdDev},
        {dx}};
  op.scale = double(channels) / double(g.values[outputGrad].numElements());  // 1 / M
  g.addOp(op);
  return dx;
}

std::size_t addFrozenBatchNormInputGrad(TrainingGraphBuilder& b, const BatchNormForward& f, std::size_t outputGrad,
                                        const LayerSpec& l) {
  OpGraph& g = b.graph();
  const std::vector<std::uint64_t> shape = g.values[outputGrad].shape;
  const std::uint64_t channels = shape.back();
  const ir::DType compute = g.values[outputGrad].dtype;
  const std::size_t zero = b.state(l, "zero_mean_grad", {channels}, ir::DType::Float, 0.0);
  const std::size_t unused = addValue(g, l.name + "/input_grad_whitened", shape, compute, ValueKind::Gradient, l.name);
  const std::size_t dx = addValue(g, l.name + "/input_grad", shape, compute, ValueKind::Gradient, l.name);
  g.addOp({OpKind::BatchNormalise, "input_grad", l.name, {outputGrad, zero, f.invStdDev, f.gammaUsed, zero},
           {unused, dx}});
  return dx;
}

}  // namespace ipusim::scheduler
