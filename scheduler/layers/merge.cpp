// add, subtract, multiply, average, maximum, minimum, concatenate (Keras's
// Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate): two or
// more inputs of one shape (concatenate: equal but for its axis) into one.
// Average is Keras's sum then division by the count: the Add ops, then a
// ScaleShift by 1 / count (its gradient, the same scaling, reaches every input). The ops and their gradients: merge_layers.hpp.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/broadcast_constant.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/layers/merge_layers.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {
namespace {

namespace k = layer_kind;

class MergeLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override {
    return {k::kAdd, k::kSubtract, k::kMultiply, k::kAverage, k::kMaximum, k::kMinimum, k::kConcatenate};
  }
  std::vector<std::string> kerasClasses() const override {
    return {"Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate"};
  }
  bool merges() const override { return true; }
  // Keras's merges AND their inputs' masks (one mask here); a concatenation's
  // axis may be the steps' (not modelled with a mask).
  MaskUse maskUse(const LayerSpec& l) const override {
    return l.kind == k::kConcatenate ? MaskUse::Refuses : MaskUse::Carries;
  }
  std::set<std::string> workloadKeys(const std::string& kind) const override {
    if (kind == k::kConcatenate) return {"axis"};
    return {};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (spec.kind != k::kConcatenate) return;
    if (l.has("axis") && !l.raw().at("axis").is_number_integer())
      l.fail(l.key("axis"), "expected an integer (Keras's count: 1 the first axis after the batch, -1 the last)");
    spec.axis = l.has("axis") ? l.raw().at("axis").get<std::int64_t>() : -1;
  }

  void readKeras(KerasConfig& c, const std::string& cls, LayerSpec& spec) const override {
    spec.kind = cls == "Add" ? k::kAdd : cls == "Subtract" ? k::kSubtract : cls == "Multiply" ? k::kMultiply
              : cls == "Average" ? k::kAverage : cls == "Maximum" ? k::kMaximum : cls == "Minimum" ? k::kMinimum
                                                                                               : k::kConcatenate;
    if (spec.kind == k::kConcatenate) spec.axis = c.integer("axis", -1);
  }

  // The inputs' common shape (concatenate: the sum of their sizes along the
  // axis, every other dimension equal).
  Shape outputShape(LayerSpec& l, const std::vector<Shape>& ins, const LayerFail& fail) const override {
    std::string shapes;
    for (const auto& s : ins) shapes += (shapes.empty() ? "" : ", ") + shapeText(s);
    if (l.kind == k::kSubtract && ins.size() != 2)
      fail("", "subtract takes exactly two inputs, got " + std::to_string(ins.size()));
    if (l.kind != k::kConcatenate) {
      for (const auto& s : ins)
        if (s != ins[0]) fail("", "the inputs' shapes do not merge: " + shapes + " (" + l.kind + " needs equal shapes)");
      return ins[0];
    }
    // Keras counts the axis with the batch (axis 0); -1 is the last.
    const std::int64_t rank = std::int64_t(ins[0].size()) + 1;
    const std::int64_t axis = l.axis < 0 ? l.axis + rank : l.axis;
    if (axis < 1 || axis >= rank)
      fail("axis", std::to_string(l.axis) + " is not an axis of the rank-" + std::to_string(rank) +
                       " inputs but the batch's (1 to " + std::to_string(rank - 1) + ", or -1 to " + std::to_string(1 - rank) + ")");
    l.axis = axis;
    Shape out = ins[0];
    out[std::size_t(axis - 1)] = 0;
    for (const auto& s : ins) {
      bool fits = s.size() == out.size();
      for (std::size_t d = 0; fits && d < s.size(); ++d) fits = d == std::size_t(axis - 1) || s[d] == out[d];
      if (!fits) fail("", "the inputs' shapes do not concatenate on axis " + std::to_string(axis) + ": " + shapes);
      out[std::size_t(axis - 1)] += s[std::size_t(axis - 1)];
    }
    return out;
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    if (l.kind == k::kAverage) return average(b, l, inputs);
    const std::size_t firstOp = b.graph().ops.size();
    const std::size_t out = addMerge(b.graph(), l, inputs, b.batch());
    const std::vector<Op> ops(b.graph().ops.begin() + std::ptrdiff_t(firstOp), b.graph().ops.end());
    b.record(inputs, out, false, [&b, kind = l.kind, inputs, ops](const Backward& bw) {
      addMergeGrad(b.graph(), kind, ops, inputs, bw.grad, [&](std::size_t in) { return bw.wants(in); },
                   [&](std::size_t in, std::size_t grad) { bw.deliver(in, grad); });
    });
    return out;
  }

 private:
  static std::size_t average(TrainingGraphBuilder& b, const LayerSpec& l, const std::vector<std::size_t>& inputs) {
    OpGraph& g = b.graph();
    LayerSpec sum = l;
    sum.kind = k::kAdd;
    const std::size_t total = addMerge(g, sum, inputs, b.batch());
    const std::uint64_t columns = g.values[total].shape.back();
    const std::size_t scale = addLayerConstant(b, l, "scale", std::vector<double>(columns, 1.0 / double(inputs.size())));
    const std::size_t shift = addLayerConstant(b, l, "shift", std::vector<double>(columns, 0.0));
    const std::size_t out = b.value(l.name + "/average", g.values[total].shape, g.values[total].dtype, ValueKind::Activation, l.name);
    g.addOp({OpKind::ScaleShift, "average", l.name, {total, scale, shift}, {out}});
    b.record(inputs, out, false, [&b, l, inputs, scale, shift, out](const Backward& bw) {
      OpGraph& g = b.graph();
      const std::size_t dx = b.value(l.name + "/input_grad", g.values[out].shape, g.values[bw.grad].dtype, ValueKind::Gradient, l.name);
      g.addOp({OpKind::ScaleShift, "input_grad", l.name, {bw.grad, scale, shift}, {dx}});
      for (std::size_t in : inputs) bw.deliver(in, dx);
    });
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makeMergeLayer() { return std::make_unique<MergeLayer>(); }

}  // namespace ipusim::scheduler
