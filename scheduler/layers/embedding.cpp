// embedding (Keras's Embedding): each token id of the model's input looked
// up in a trainable table of input_dim rows of output_dim values; the output
// is the input's shape with output_dim appended. The table is drawn as Keras
// draws it (its default RandomUniform(-0.05, 0.05), or the file's
// embeddings_initializer), in the variables' type and cast to the compute
// type under mixed_float16.
//   forward:  out[i] = table[ids[i]]                  (EmbeddingLookup)
//   backward: dTable = sum over i of dOut[i] at row ids[i]  (EmbeddingGrad: a
//             dense gradient, as Keras's on an IPU; the ids get none)
// Lowered as popops plans multiSlice and multiUpdateAdd (planning/
// embedding_plan.hpp). The ids are the model's input, streamed as int32
// (models/token_inputs.hpp says when). With mask_zero, the output carries
// Keras's mask (id 0 marks a padded step: TrainingGraphBuilder::maskOf) to
// the layers that take it (Layer::maskUse).
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/workload_limits.hpp"
#include "scheduler/models/embedding_layout.hpp"

namespace ipusim::scheduler {
namespace {

// Keras's default embeddings_initializer: "uniform", RandomUniform(-0.05, 0.05).
InitializerSpec kerasDefaultTable() {
  InitializerSpec s;
  s.kind = InitializerSpec::Kind::Uniform;
  s.a = -0.05, s.b = 0.05;
  s.text = "RandomUniform(-0.05, 0.05)";
  return s;
}

class EmbeddingLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kEmbedding}; }
  std::vector<std::string> kerasClasses() const override { return {"Embedding"}; }
  std::set<std::string> workloadKeys(const std::string&) const override { return {"input_dim", "output_dim", "mask_zero"}; }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    for (const char* key : {"input_dim", "output_dim"})
      if (!l.has(key)) l.fail(l.key(key), "missing (expected a positive integer)");
    spec.inputDim = l.count32("input_dim", 0, true);
    spec.units = l.count32("output_dim", 0, true);
    spec.maskZero = l.boolean("mask_zero", false);
    spec.initializers["embeddings"] = kerasDefaultTable();
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kEmbedding;
    spec.inputDim = c.count32("input_dim");
    spec.units = c.count32("output_dim");
    spec.initializers["embeddings"] = kerasDefaultTable();
    c.requireInitializer("embeddings_initializer", {});  // any modelled one replaces the default (initializers())
    readPenalties(c, {"embeddings"});
    spec.maskZero = c.boolean("mask_zero", false);
    if (c.boolean("sparse", false)) c.fail("sparse", "true is not modelled (a dense gradient, as on an IPU)");
    // Keras 1's dropout on the table (Keras 2 drops the key with a warning) and its ids' dtype.
    if (c.has("dropout") && !c.isNull("dropout") && c.number("dropout", 0) != 0)
      c.fail("dropout", "is Keras 1's dropout of whole rows of the table, not modelled (Keras 2 ignores it): only 0");
    c.ignore({"dropout", "input_dtype"});
    c.requireNull("lora_rank", "LoRA adapters are extra weights");
    c.ignore({"lora_alpha"});
    c.requireNull("quantization_config", "quantized weights");
    readInputLength(c, spec);  // checked against the input by outputShape()
  }

  Shape outputShape(LayerSpec& spec, const std::vector<Shape>& in, const LayerFail& fail) const override {
    if (!spec.targetShape.empty() && (in[0].size() != 1 || in[0][0] != std::uint64_t(spec.targetShape[0])))
      fail("input_length", std::to_string(spec.targetShape[0]) + " differs from the input's shape " + shapeText(in[0]));
    Shape out = in[0];
    out.push_back(spec.units);
    return out;
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    constexpr std::uint64_t kFloat = 4;
    const WideCount table = WideCount(l.inputDim) * l.units * kFloat;
    // The table is blamed on the larger of its two sizes (an output_dim of
    // 2^31 is not the vocabulary's fault).
    if (table > kMaxTensorBytes && l.units > l.inputDim)
      fail("output_dim", std::to_string(l.units) + " x input_dim " + std::to_string(l.inputDim) + " needs " +
                             wideText(table) + " bytes of float table; " + tensorLimitText());
    if (table > kMaxTensorBytes)
      fail("input_dim", std::to_string(l.inputDim) + " x output_dim " + std::to_string(l.units) + " needs " +
                            wideText(table) + " bytes of float table; " + tensorLimitText());
    const WideCount out = WideCount(batch) * elementsOf(l.inputShape) * l.units * kFloat;
    if (out > kMaxTensorBytes)
      fail("output_dim", std::to_string(l.units) + " for each of " + std::to_string(elementsOf(l.inputShape)) +
                             " ids an example needs " + wideText(out) + " bytes of float activations (batch " +
                             std::to_string(batch) + "); " + tensorLimitText());
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    // The gradient reads the ids (the model's input, counted there).
    return {{{"embeddings", (long double)l.inputDim * l.units}}, 0, "", 0};
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t, const std::vector<std::size_t>& inputs) const override {
    OpGraph& g = b.graph();
    const std::size_t ids = inputs[0];
    if (g.values[ids].dtype != ir::DType::Int)
      throw std::invalid_argument("layer '" + l.name + "' (embedding): reads a computed value; only the model's "
                                  "input (token ids) is looked up (not modelled: ids computed by another layer)");
    const std::uint64_t lookups = g.values[ids].numElements();
    // Stored by column blocks (models/embedding_layout.hpp): [blocks, input_dim, grain].
    const std::uint64_t grain = embeddingColumnGrain(l.units);
    const std::size_t table =
        b.weight(l, "embeddings", {l.units / grain, l.inputDim, grain}, {}, 0, {l.inputDim, l.units});
    const std::size_t tableUsed = b.cast(table, b.compute(), l.name + "/embeddings_cast", l.name, ValueKind::Activation);
    const std::size_t rows = b.value(l.name + "/lookup", {lookups, l.units}, b.compute(), ValueKind::Activation, l.name);
    g.addOp({OpKind::EmbeddingLookup, "lookup", l.name, {ids, tableUsed}, {rows}});
    b.record({}, rows, b.trains(table), [&b, name = l.name, ids, table](const Backward& bw) {
      if (!bw.trains(table)) return;  // (frozen: the ids take no gradient)
      OpGraph& g = b.graph();
      const std::size_t dTable =
          b.value(name + "/embeddings_grad", g.values[table].shape, b.variables(), ValueKind::Gradient, name);
      // The rows' gradient in the table's type first (mixed_float16: half rows, a float table).
      const std::size_t dRows = b.cast(bw.grad, b.variables(), name + "/lookup_grad_cast", name, ValueKind::Gradient);
      g.addOp({OpKind::EmbeddingGrad, "embeddings_grad", name, {ids, dRows}, {dTable}});
      bw.weightGradient(table, dTable);
    });
    const std::size_t out = b.shaped(rows, l.outputShape, l.name, "unrows");
    if (l.maskZero) b.setMask(out, ids);  // Keras's compute_mask: ids != 0, computed where a layer takes it
    return out;
  }
};

}  // namespace

std::unique_ptr<Layer> makeEmbeddingLayer() { return std::make_unique<EmbeddingLayer>(); }

}  // namespace ipusim::scheduler
