#include "scheduler/op_graph.hpp"

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
    case OpKind::SgdUpdate: return "SgdUpdate";
    case OpKind::Cast: return "Cast";
    case OpKind::Conv2D: return "Conv2D";
    case OpKind::Conv2DInputGrad: return "Conv2DInputGrad";
    case OpKind::Conv2DWeightGrad: return "Conv2DWeightGrad";
    case OpKind::MaxPool2D: return "MaxPool2D";
    case OpKind::MaxPool2DGrad: return "MaxPool2DGrad";
    case OpKind::AvgPool2D: return "AvgPool2D";
    case OpKind::AvgPool2DGrad: return "AvgPool2DGrad";
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

OpGraph buildTrainingGraph(const Workload& w) {
  using ir::DType;
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
  g.images = value("images", {batch, w.dataset.features}, DType::Float, ValueKind::Input, "input");
  g.labels = value("labels", {batch}, DType::Int, ValueKind::Input, "input");

  // Forward. Each dense layer: matmul, bias, activation. Per op we remember
  // what its gradient needs.
  struct DenseRecord {
    std::string layer;
    std::size_t input, kernel, bias, kernelUsed, preActivation, output;
    Activation activation;
  };
  std::vector<DenseRecord> dense;
  std::size_t x = cast(g.images, compute, "input/cast", "input", ValueKind::Activation);
  std::uint64_t features = w.dataset.features;
  for (const LayerSpec& l : w.layers) {
    if (l.kind == "flatten") continue;  // images are already [batch, features]
    DenseRecord d{l.name, x, 0, 0, 0, 0, 0, l.activation};
    d.kernel = value(l.name + "/kernel", {features, l.units}, variables, ValueKind::Weight, l.name,
                     glorotUniform(features, l.units, w.seed, dense.size()));
    d.bias = value(l.name + "/bias", {l.units}, variables, ValueKind::Weight, l.name);
    g.weights.push_back(d.kernel);
    g.weights.push_back(d.bias);
    d.kernelUsed = cast(d.kernel, compute, l.name + "/kernel_cast", l.name, ValueKind::Activation);
    const std::size_t biasUsed = cast(d.bias, compute, l.name + "/bias_cast", l.name, ValueKind::Activation);
    const std::size_t mm = value(l.name + "/matmul", {batch, l.units}, compute, ValueKind::Activation, l.name);
    g.addOp({OpKind::MatMul, "matmul", l.name, {x, d.kernelUsed}, {mm}});
    d.preActivation = value(l.name + "/bias_add", {batch, l.units}, compute, ValueKind::Activation, l.name);
    g.addOp({OpKind::AddBias, "bias_add", l.name, {mm, biasUsed}, {d.preActivation}});
    d.output = d.preActivation;
    if (l.activation == Activation::Relu) {
      d.output = value(l.name + "/relu", {batch, l.units}, compute, ValueKind::Activation, l.name);
      g.addOp({OpKind::Relu, "relu", l.name, {d.preActivation}, {d.output}});
    }
    dense.push_back(d);
    x = d.output;
    features = l.units;
  }
  if (features != w.dataset.classes)
    throw std::invalid_argument(w.name + ": model.layers: the last dense layer has " + std::to_string(features) +
                                " units but the dataset has " + std::to_string(w.dataset.classes) + " classes");

  // Loss: sparse categorical cross-entropy on the logits (a softmax
  // activation of the last layer is fused into it, as Keras does), computed
  // in float whatever the logits' type.
  const std::size_t probs = value("loss/probs", {batch, features}, DType::Float, ValueKind::Activation, "loss");
  const std::size_t perRow = value("loss/per_example", {batch}, DType::Float, ValueKind::Activation, "loss");
  g.addOp({OpKind::SoftmaxCrossEntropy, "sparse_softmax_cross_entropy", "loss", {x, g.labels}, {probs, perRow}});
  g.loss = value("loss", {1}, DType::Float, ValueKind::Loss, "loss");
  Op mean{OpKind::MeanLoss, "mean", "loss", {perRow}, {g.loss}};
  mean.scale = 1.0 / double(batch);
  g.addOp(mean);

  // Autodiff, in reverse layer order. The loss gradient w.r.t. the logits is
  // the fused softmax-cross-entropy gradient scaled by 1/batch (the mean).
  std::size_t grad = value("loss/logits_grad", {batch, features}, compute, ValueKind::Gradient, "loss");
  Op seed{OpKind::SoftmaxCrossEntropyGrad, "sparse_softmax_cross_entropy_grad", "loss", {probs, g.labels}, {grad}};
  seed.scale = 1.0 / double(batch);
  g.addOp(seed);
  std::map<std::size_t, std::size_t> weightGrad;
  for (std::size_t i = dense.size(); i-- > 0;) {
    const DenseRecord& d = dense[i];
    const std::vector<std::uint64_t> kshape = g.values[d.kernel].shape;  // a copy: addValue reallocates
    if (d.activation == Activation::Relu) {
      const std::size_t pre = value(d.layer + "/relu_grad", {batch, kshape[1]}, compute, ValueKind::Gradient, d.layer);
      g.addOp({OpKind::ReluGrad, "relu_grad", d.layer, {d.output, grad}, {pre}});
      grad = pre;
    }
    // The bias add passes the gradient through; the bias gradient sums rows
    // (accumulated in float, delivered in the variables' type).
    const std::size_t db = value(d.layer + "/bias_grad", {kshape[1]}, variables, ValueKind::Gradient, d.layer);
    g.addOp({OpKind::ReduceRows, "bias_grad", d.layer, {grad}, {db}});
    // dKernel = input^T . grad (input stored batch x in: transposed a), its
    // partials in float, delivered in the variables' type.
    const std::size_t dk = value(d.layer + "/kernel_grad", kshape, variables, ValueKind::Gradient, d.layer);
    Op dkOp{OpKind::MatMul, "kernel_grad", d.layer, {d.input, grad}, {dk}};
    dkOp.transposeA = true;
    g.addOp(dkOp);
    weightGrad[d.kernel] = dk;
    weightGrad[d.bias] = db;
    if (i > 0) {  // dInput = grad . kernel^T (kernel stored in x out: transposed b)
      const std::size_t dx = value(d.layer + "/input_grad", {batch, kshape[0]}, compute, ValueKind::Gradient, d.layer);
      Op dxOp{OpKind::MatMul, "input_grad", d.layer, {grad, d.kernelUsed}, {dx}};
      dxOp.transposeB = true;
      g.addOp(dxOp);
      grad = dx;
    }
  }

  // SGD: weight -= learningRate * gradient, after every reader of the weight.
  for (std::size_t wv : g.weights) {
    Op up{OpKind::SgdUpdate, "sgd_update", g.values[wv].layer, {wv, weightGrad.at(wv)}, {}};
    up.name = g.values[wv].name.substr(g.values[wv].name.find('/') + 1) + "_update";
    up.scale = -w.learningRate;
    const std::size_t id = g.addOp(up);
    for (std::size_t op = 0; op < id; ++op)
      for (std::size_t in : g.ops[op].inputs)
        if (in == wv) g.addOrderEdge(op, id);
  }
  return g;
}

}  // namespace ipusim::scheduler
