#include "scheduler/op_graph.hpp"

#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

namespace ipusim::scheduler {

namespace {
constexpr std::size_t npos = ~std::size_t(0);

// Glorot uniform: U(-l, l), l = sqrt(6 / (fanIn + fanOut)). The uniform is
// drawn from the 53 high bits of mt19937_64 so it is the same on every
// standard library.
std::vector<double> glorotUniform(std::uint64_t fanIn, std::uint64_t fanOut, std::mt19937_64& rng) {
  const double limit = std::sqrt(6.0 / double(fanIn + fanOut));
  std::vector<double> v(fanIn * fanOut);
  for (auto& x : v) {
    const double u = double(rng() >> 11) * (1.0 / 9007199254740992.0);
    x = float(-limit + 2 * limit * u);  // the device holds floats
  }
  return v;
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
  OpGraph g;
  const std::uint64_t batch = w.dataset.batchSize;
  std::mt19937_64 rng(w.seed);
  g.images = g.addValue({"images", {batch, w.dataset.features}, false, ValueKind::Input, "input", {}});
  g.labels = g.addValue({"labels", {batch}, true, ValueKind::Input, "input", {}});

  // Forward. Each dense layer: matmul, bias, activation. Per op we remember
  // what its gradient needs.
  struct DenseRecord {
    std::string layer;
    std::size_t input, kernel, bias, preActivation, output;
    Activation activation;
  };
  std::vector<DenseRecord> dense;
  std::size_t x = g.images;
  std::uint64_t features = w.dataset.features;
  for (const LayerSpec& l : w.layers) {
    if (l.kind == "flatten") continue;  // images are already [batch, features]
    DenseRecord d{l.name, x, 0, 0, 0, 0, l.activation};
    d.kernel = g.addValue({l.name + "/kernel", {features, l.units}, false, ValueKind::Weight, l.name,
                           glorotUniform(features, l.units, rng)});
    d.bias = g.addValue({l.name + "/bias", {l.units}, false, ValueKind::Weight, l.name,
                         std::vector<double>(l.units, 0.0)});
    g.weights.push_back(d.kernel);
    g.weights.push_back(d.bias);
    const std::size_t mm = g.addValue({l.name + "/matmul", {batch, l.units}, false, ValueKind::Activation, l.name, {}});
    g.addOp({OpKind::MatMul, "matmul", l.name, {x, d.kernel}, {mm}});
    d.preActivation = g.addValue({l.name + "/bias_add", {batch, l.units}, false, ValueKind::Activation, l.name, {}});
    g.addOp({OpKind::AddBias, "bias_add", l.name, {mm, d.bias}, {d.preActivation}});
    d.output = d.preActivation;
    if (l.activation == Activation::Relu) {
      d.output = g.addValue({l.name + "/relu", {batch, l.units}, false, ValueKind::Activation, l.name, {}});
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
  // activation of the last layer is fused into it, as Keras does).
  const std::size_t probs = g.addValue({"loss/probs", {batch, features}, false, ValueKind::Activation, "loss", {}});
  const std::size_t perRow = g.addValue({"loss/per_example", {batch}, false, ValueKind::Activation, "loss", {}});
  g.addOp({OpKind::SoftmaxCrossEntropy, "sparse_softmax_cross_entropy", "loss", {x, g.labels}, {probs, perRow}});
  g.loss = g.addValue({"loss", {1}, false, ValueKind::Loss, "loss", {}});
  Op mean{OpKind::MeanLoss, "mean", "loss", {perRow}, {g.loss}};
  mean.scale = 1.0 / double(batch);
  g.addOp(mean);

  // Autodiff, in reverse layer order. The loss gradient w.r.t. the logits is
  // the fused softmax-cross-entropy gradient scaled by 1/batch (the mean).
  std::size_t grad = g.addValue({"loss/logits_grad", {batch, features}, false, ValueKind::Gradient, "loss", {}});
  Op seed{OpKind::SoftmaxCrossEntropyGrad, "sparse_softmax_cross_entropy_grad", "loss", {probs, g.labels}, {grad}};
  seed.scale = 1.0 / double(batch);
  g.addOp(seed);
  std::map<std::size_t, std::size_t> weightGrad;
  for (std::size_t i = dense.size(); i-- > 0;) {
    const DenseRecord& d = dense[i];
    const std::vector<std::uint64_t> kshape = g.values[d.kernel].shape;  // a copy: addValue reallocates
    if (d.activation == Activation::Relu) {
      const std::size_t pre = g.addValue({d.layer + "/relu_grad", {batch, kshape[1]}, false, ValueKind::Gradient, d.layer, {}});
      g.addOp({OpKind::ReluGrad, "relu_grad", d.layer, {d.output, grad}, {pre}});
      grad = pre;
    }
    // The bias add passes the gradient through; the bias gradient sums rows.
    const std::size_t db = g.addValue({d.layer + "/bias_grad", {kshape[1]}, false, ValueKind::Gradient, d.layer, {}});
    g.addOp({OpKind::ReduceRows, "bias_grad", d.layer, {grad}, {db}});
    // dKernel = input^T . grad (input stored batch x in: transposed a).
    const std::size_t dk = g.addValue({d.layer + "/kernel_grad", kshape, false, ValueKind::Gradient, d.layer, {}});
    Op dkOp{OpKind::MatMul, "kernel_grad", d.layer, {d.input, grad}, {dk}};
    dkOp.transposeA = true;
    g.addOp(dkOp);
    weightGrad[d.kernel] = dk;
    weightGrad[d.bias] = db;
    if (i > 0) {  // dInput = grad . kernel^T (kernel stored in x out: transposed b)
      const std::size_t dx = g.addValue({d.layer + "/input_grad", {batch, kshape[0]}, false, ValueKind::Gradient, d.layer, {}});
      Op dxOp{OpKind::MatMul, "input_grad", d.layer, {grad, d.kernel}, {dx}};
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
