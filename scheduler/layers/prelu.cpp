// prelu (Keras's PReLU): relu(x) - alpha relu(-x), i.e. x > 0 ? x : alpha x,
// with a trainable alpha of the input's per-example shape in which the
// shared axes (Keras's shared_axes; 1 the first after the batch) are 1
// (keras/src/layers/activations/prelu.py). Alpha starts at
// alpha_initializer's value (zeros, Keras's default) and is updated by the
// optimizer like every weight.
//
// The shared axes must be the leading axes (1, or 1 and 2, ...: images
// sharing alpha over rows and columns, sequences over steps): alpha is then
// one value per element of the remaining trailing axes, and the ops read it
// per column as a bias (PRelu, PReluGrad). Backward: the input's gradient
// x > 0 ? g : x < 0 ? alpha g : 0 (Keras's: relu's derivative is 0 at 0), and
// alpha's, the sum over the batch and the shared axes of x < 0 ? x g : 0
// (PReluAlphaGrad, then a ReduceRows as a bias gradient), in the variables'
// type.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"

#include <algorithm>

namespace ipusim::scheduler {
namespace {

// Keras's shared_axes: null, an integer or a list of them.
template <class Fail>
std::vector<std::int64_t> sharedAxesOf(const nlohmann::json& v, Fail fail) {
  std::vector<std::int64_t> axes;
  if (v.is_null()) return axes;
  const nlohmann::json list = v.is_array() ? v : nlohmann::json::array({v});
  for (const auto& a : list) {
    if (!a.is_number_integer()) fail("expected null, an integer or a list of integers, got " + v.dump());
    axes.push_back(a.get<std::int64_t>());
  }
  return axes;
}

// An initial alpha: zeros (Keras's default), ones, or a constant.
template <class Fail>
double initialAlphaOf(const nlohmann::json& v, Fail fail) {
  if (v.is_null()) return 0;
  if (v.is_number()) return v.get<double>();
  const std::string cls = v.is_string() ? v.get<std::string>() : kerasClassName(v);
  if (cls == "Zeros" || cls == "zeros") return 0;
  if (cls == "Ones" || cls == "ones") return 1;
  if (cls == "Constant" && v.contains("config") && v["config"].is_object() && v["config"].value("value", nlohmann::json()).is_number())
    return v["config"]["value"].get<double>();
  fail(v.dump() + " is not modelled (Zeros, Ones or Constant(value); a number in a workload)");
  return 0;
}

class PReluLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kPRelu}; }
  std::vector<std::string> kerasClasses() const override { return {"PReLU"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"shared_axes", "alpha_initializer"}; }
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    const nlohmann::json& j = l.raw();
    spec.axes = sharedAxesOf(j.value("shared_axes", nlohmann::json()), [&](const std::string& w) { l.fail(l.key("shared_axes"), w); });
    spec.activationParams.alpha = initialAlphaOf(j.value("alpha_initializer", nlohmann::json()),
                                                 [&](const std::string& w) { l.fail(l.key("alpha_initializer"), w); });
  }
  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kPRelu;
    c.ignore({"shared_axes", "alpha_initializer"});
    // None: add_weight's default for a float weight, GlorotUniform (a draw, not a constant).
    if (c.isNull("alpha_initializer"))
      c.fail("alpha_initializer", "null (Keras then draws alpha GlorotUniform) is not modelled (Zeros, Ones or Constant(value))");
    spec.axes = sharedAxesOf(c.at("shared_axes"), [&](const std::string& w) { c.fail("shared_axes", w); });
    spec.activationParams.alpha = initialAlphaOf(c.at("alpha_initializer"), [&](const std::string& w) { c.fail("alpha_initializer", w); });
    readPenalties(c, {"alpha"});
  }
  // The shared axes resolved and checked: leading axes of the input.
  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const std::int64_t rank = std::int64_t(in[0].size());
    std::vector<std::int64_t> axes = spec.axes;
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] < 1 || axes[i] > rank)
        fail("shared_axes", std::to_string(axes[i]) + " is not an axis of the " + shapeText(in[0]) +
                                " input (1 to " + std::to_string(rank) + "; 0 is the batch)");
      if (axes[i] != std::int64_t(i) + 1)
        fail("shared_axes", "only leading axes can be shared (1, or 1 and 2, ...): alpha is read per element of the "
                            "trailing axes; got " + nlohmann::json(spec.axes).dump());
    }
    spec.axes = axes;
    return in[0];
  }
  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    long double alpha = 1;
    for (std::size_t d = 0; d < l.inputShape.size(); ++d)
      if (std::find(l.axes.begin(), l.axes.end(), std::int64_t(d + 1)) == l.axes.end()) alpha *= l.inputShape[d];
    return {{{"alpha", alpha}}, 0, "input", (long double)elementsOf(l.inputShape)};  // both gradients read the input
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    OpGraph& g = b.graph();
    const std::size_t x = inputs[0];
    Shape alphaShape = l.inputShape;
    for (std::int64_t a : l.axes) alphaShape[std::size_t(a - 1)] = 1;
    const std::uint64_t columns = elementsOf(alphaShape);
    const std::size_t alpha = b.weight(l, "alpha", alphaShape, {}, l.activationParams.alpha);
    const std::size_t alphaUsed = b.cast(alpha, b.compute(), l.name + "/alpha_cast", l.name, ValueKind::Activation);
    const std::size_t out = b.value(l.name + "/prelu", g.values[x].shape, b.compute(), ValueKind::Activation, l.name);
    g.addOp({OpKind::PRelu, "prelu", l.name, {x, alphaUsed}, {out}});
    b.record({x}, out, b.trains(alpha), [&b, x, alpha, alphaUsed, columns, layer = l.name](const Backward& bw) {
      OpGraph& g = b.graph();
      const std::vector<std::uint64_t> shape = g.values[x].shape;
      if (bw.wants(x)) {
        const std::size_t dx = b.value(layer + "/prelu_grad", shape, b.compute(), ValueKind::Gradient, layer);
        g.addOp({OpKind::PReluGrad, "prelu_grad", layer, {x, bw.grad, alphaUsed}, {dx}});
        bw.deliver(x, dx);
      }
      if (!bw.trains(alpha)) return;
      // alpha's gradient: the terms, as rows of alpha's elements, summed over the rows.
      const std::size_t term = b.value(layer + "/alpha_grad_terms", shape, b.compute(), ValueKind::Gradient, layer);
      g.addOp({OpKind::PReluAlphaGrad, "alpha_grad_terms", layer, {x, bw.grad}, {term}});
      const std::uint64_t rows = g.values[term].numElements() / columns;
      const std::size_t rowsOf = b.value(layer + "/alpha_grad_rows", {rows, columns}, b.compute(), ValueKind::Gradient, layer);
      g.addOp({OpKind::Reshape, "alpha_grad_rows", layer, {term}, {rowsOf}});
      const std::size_t da = b.value(layer + "/alpha_grad", g.values[alpha].shape, b.variables(), ValueKind::Gradient, layer);
      g.addOp({OpKind::ReduceRows, "alpha_grad", layer, {rowsOf}, {da}});
      bw.weightGradient(alpha, da);
    });
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makePReluLayer() { return std::make_unique<PReluLayer>(); }

}  // namespace ipusim::scheduler
