// position_embedding (KerasHub's PositionEmbedding, keras_hub/src/layers/
// modeling/position_embedding.py, as BERT and GPT models learn positions): a
// trainable table `embeddings` [sequence_length, features] (Glorot uniform,
// KerasHub's default `initializer`) whose rows for the input's steps are the
// output, broadcast over the batch: the output has the input's shape and
// depends on its shape only (a model adds it to the token embeddings, as
// KerasHub's example does). Forward: one CopyView (the table repeated for
// every example, stride 0 over the batch); backward: the output's gradient
// summed over the batch (ReduceRows) is the table's; the input gets none.
// An input of fewer steps than sequence_length (KerasHub slices the table's
// first rows) is not modelled yet: the steps must equal it.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/layers/view_ops.hpp"

namespace ipusim::scheduler {
namespace {

class PositionEmbeddingLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kPositionEmbedding}; }
  std::vector<std::string> kerasClasses() const override { return {"PositionEmbedding"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"sequence_length"}; }

  // (targetShape: {sequence_length} when given, checked against the input's steps.)
  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    if (l.has("sequence_length")) spec.targetShape = {std::int64_t(l.count("sequence_length", 0, true))};
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kPositionEmbedding;
    c.require("sequence_length", "a positive integer (KerasHub's PositionEmbedding)");
    const std::int64_t n = c.integer("sequence_length", 0);
    if (n <= 0) c.fail("sequence_length", "expected a positive integer, got " + c.at("sequence_length").dump());
    spec.targetShape = {n};
    c.requireInitializer("initializer", {"GlorotUniform"});
  }

  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    if (in[0].size() != 2)
      fail("", "the input is " + shapeText(in[0]) + ": a [steps, features] sequence is modelled");
    if (!l.targetShape.empty() && std::uint64_t(l.targetShape[0]) != in[0][0])
      fail("sequence_length", std::to_string(l.targetShape[0]) + " positions for an input of " + std::to_string(in[0][0]) +
                                  " steps: the table's first rows for a shorter input are not modelled yet (give the steps)");
    return in[0];
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    return {{{"embeddings", (long double)elementsOf(l.inputShape)}}, 0, "", 0};
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& spec, std::size_t, const std::vector<std::size_t>&) const override {
    LayerSpec l = spec;  // the Keras key "initializer" draws the table
    if (const auto it = l.initializers.find("initializer"); it != l.initializers.end()) {
      l.initializers["embeddings"] = it->second;
      l.initializers.erase("initializer");
    }
    OpGraph& g = b.graph();
    const std::uint64_t steps = l.inputShape[0], features = l.inputShape[1], n = steps * features;
    const std::size_t table =
        b.weight(l, "embeddings", {steps, features}, [&] { return b.glorotUniform(steps, features); });
    const std::size_t used = b.cast(table, b.compute(), l.name + "/embeddings_cast", l.name, ValueKind::Activation);
    const std::size_t out = addCopyView(g, used, {{b.batch(), 0}, {n, 1}}, {b.batch(), steps, features}, l.name,
                                        "positions", ValueKind::Activation);
    b.record({used}, out, b.trains(table), [&b, layer = l.name, table, n](const Backward& bw) {
      if (!bw.trains(table)) return;  // (frozen: the output reads nothing else)
      OpGraph& g = b.graph();
      const std::size_t rows = b.value(layer + "/positions_grad_rows", {b.batch(), n}, b.compute(), ValueKind::Gradient, layer);
      g.addOp({OpKind::Reshape, "positions_grad_rows", layer, {bw.grad}, {rows}});
      const std::size_t dt = b.value(layer + "/embeddings_grad", g.values[table].shape, b.variables(), ValueKind::Gradient, layer);
      g.addOp({OpKind::ReduceRows, "embeddings_grad", layer, {rows}, {dt}});
      bw.weightGradient(table, dt);
    });
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makePositionEmbeddingLayer() { return std::make_unique<PositionEmbeddingLayer>(); }

}  // namespace ipusim::scheduler
