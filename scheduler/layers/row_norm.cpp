#include "scheduler/layers/row_norm.hpp"

namespace ipusim::scheduler {

RowNormalized addRowNormalise(TrainingGraphBuilder& b, std::size_t x, double epsilon, const std::string& layer) {
  OpGraph& g = b.graph();
  const std::vector<std::uint64_t> shape = g.values[x].shape;
  RowNormalized f;
  f.whitened = b.value(layer + "/whitened", shape, g.values[x].dtype, ValueKind::Activation, layer);
  f.invStdDev = b.value(layer + "/inv_std_dev", {shape[0]}, ir::DType::Float, ValueKind::Activation, layer);
  Op normalise{OpKind::LayerNormalise, "normalise", layer, {x}, {f.whitened, f.invStdDev}};
  normalise.epsilon = epsilon;
  g.addOp(normalise);
  return f;
}

std::size_t addRowNormaliseGrad(TrainingGraphBuilder& b, const RowNormalized& f, std::size_t whitenedGrad,
                                const std::string& layer) {
  OpGraph& g = b.graph();
  const std::vector<std::uint64_t> shape = g.values[f.whitened].shape;
  const std::size_t rows = reshapedValue(g, whitenedGrad, shape, layer, "whitened_grad_rows", ValueKind::Gradient);
  const std::size_t dx = b.value(layer + "/input_grad", shape, g.values[whitenedGrad].dtype, ValueKind::Gradient, layer);
  g.addOp({OpKind::LayerNormInputGrad, "input_grad", layer, {rows, f.whitened, f.invStdDev}, {dx}});
  return dx;
}

ColumnAffine addColumnAffine(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t whitened) {
  OpGraph& g = b.graph();
  const ir::DType compute = g.values[whitened].dtype;
  const std::uint64_t n = g.values[whitened].shape.back();
  ColumnAffine a;
  a.output = whitened;
  if (!l.scale && !l.center) return a;
  // Without scale (center) a fixed one (zero) stands for gamma (beta).
  if (l.scale) a.gamma = b.weight(l, "gamma", {n}, {}, 1.0);
  if (l.center) a.beta = b.weight(l, "beta", {n}, {}, 0.0);
  a.gammaUsed = l.scale ? b.cast(a.gamma, compute, l.name + "/gamma_cast", l.name, ValueKind::Activation)
                        : b.state(l, "unit_scale", {n}, compute, 1.0);
  const std::size_t betaUsed = l.center ? b.cast(a.beta, compute, l.name + "/beta_cast", l.name, ValueKind::Activation)
                                        : b.state(l, "no_shift", {n}, compute, 0.0);
  a.output = b.value(l.name + "/" + l.kind, g.values[whitened].shape, compute, ValueKind::Activation, l.name);
  g.addOp({OpKind::ScaleShift, "scale_shift", l.name, {whitened, a.gammaUsed, betaUsed}, {a.output}});
  return a;
}

std::size_t addColumnAffineGrad(TrainingGraphBuilder& b, const Backward& bw, const LayerSpec& l, const ColumnAffine& a,
                                std::size_t whitened, std::size_t grad, bool wantWhitenedGrad) {
  OpGraph& g = b.graph();
  const std::vector<std::uint64_t> shape = g.values[whitened].shape;
  const std::uint64_t n = shape.back();
  const ir::DType compute = g.values[grad].dtype;
  // The weights' gradients, accumulated in float and delivered in the weights' type.
  auto columnSums = [&](std::size_t in, const char* name) {
    const std::size_t sums = b.value(l.name + "/" + name, {n}, ir::DType::Float, ValueKind::Gradient, l.name);
    g.addOp({OpKind::ReduceRows, name, l.name, {in}, {sums}});
    return sums;
  };
  auto deliver = [&](std::size_t weight, std::size_t sums, const std::string& name) {
    bw.weightGradient(weight, b.cast(sums, g.values[weight].dtype, l.name + "/" + name, l.name, ValueKind::Gradient));
  };
  // (A frozen layer's gamma and beta take no gradient.)
  if (a.beta != ColumnAffine::kNone && bw.trains(a.beta))
    deliver(a.beta, columnSums(grad, "beta_grad"), "beta_grad_cast");
  if (a.gamma != ColumnAffine::kNone && bw.trains(a.gamma)) {
    const std::size_t product = b.value(l.name + "/grad_whitened_product", shape, compute, ValueKind::Gradient, l.name);
    g.addOp({OpKind::Mul, "grad_whitened_product", l.name, {grad, whitened}, {product}});
    deliver(a.gamma, columnSums(product, "gamma_grad"), "gamma_grad_cast");
  }
  if (!wantWhitenedGrad || a.gamma == ColumnAffine::kNone) return grad;
  const std::size_t whitenedGrad = b.value(l.name + "/whitened_grad", shape, compute, ValueKind::Gradient, l.name);
  const std::size_t noShift = b.state(l, "no_shift_grad", {n}, compute, 0.0);
  g.addOp({OpKind::ScaleShift, "whitened_grad", l.name, {grad, a.gammaUsed, noShift}, {whitenedGrad}});
  return whitenedGrad;
}

std::size_t reshapedValue(OpGraph& g, std::size_t v, std::vector<std::uint64_t> shape, const std::string& layer,
                          const std::string& name, ValueKind kind) {
  if (g.values[v].shape == shape) return v;
  const std::size_t out = g.addValue({layer + "/" + name, std::move(shape), g.values[v].dtype, kind, layer, std::nullopt, 0});
  g.addOp({OpKind::Reshape, name, layer, {v}, {out}});
  return out;
}

}  // namespace ipusim::scheduler
