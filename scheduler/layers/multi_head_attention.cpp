// multi_head_attention (Keras's MultiHeadAttention) over [steps, features]
// inputs: a query [Tq, Dq], a value [Tv, Dv] and a key [Tv, Dk] (the value
// when not given), as Keras 3 computes it
// (keras/src/layers/attention/multi_head_attention.py):
//   q = query . Wq + bq, k = key . Wk + bk, v = value . Wv + bv
//                      (EinsumDense on the last axis, to [steps, heads, dim])
//   q = q / sqrt(key_dim)                   (Keras scales the query)
//   scores[h] = q[h] . k[h]^T                [heads, Tq, Tv] per example
//   scores += -1e9 (float16: -3e4) where use_causal_mask hides a key (its
//             step after the query's): Keras's Softmax adds that to masked
//             scores (_large_negative_number)
//   p = softmax(scores) over the keys, then dropout(p) in training
//   context[h] = p[h] . v[h]                 [heads, Tq, value_dim]
//   out = context . Wo + bo                  (EinsumDense over [heads, value_dim])
// Ops: each projection is a MatMul over every step of every example (Dense's
// rows); the heads are moved next to the batch by a CopyView (a transpose,
// as Permute's) so that the per-head products are one BatchMatMul each over
// batch x heads groups, planned as poplin plans grouped matmuls
// (planning/matmul_plan.hpp); the scale is a ScaleShift, the causal mask a
// constant added by an AddBias, the softmax a Softmax over each row of
// scores. Each op records its gradient (cell_ops.hpp, the tape).
// Keras's masks (an Embedding's mask_zero carried to the query, value or
// key, as Keras 3's call reads query_mask, value_mask, key_mask): the
// attention mask is their AND with the causal mask (_compute_attention_mask:
// the query's over the rows, the value's and key's over the keys), added as
// Softmax adds it ((1 - mask) x -1e9) by one IdMask op (index 3) reading the
// ids in place of the causal AddBias; the output keeps the query's mask.
// Weights, stored row-major as Keras stores them: query_kernel [Dq, heads x
// key_dim] (Keras's [Dq, heads, key_dim]), query_bias [heads x key_dim], the
// same for key_ and value_ (value_dim), output_kernel [heads x value_dim,
// units], output_bias [units]; Glorot uniform with the fans Keras computes
// for those rank-3 kernels, zero biases. Not modelled (refused by key):
// attention over axes other than the steps, an attention_mask tensor or
// masks given as call arguments, return_attention_scores.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/layers/broadcast_constant.hpp"
#include "scheduler/layers/cell_ops.hpp"
#include "scheduler/layers/activation_functions.hpp"
#include "scheduler/layers/layer_keys.hpp"
#include "scheduler/layers/layers.hpp"
#include "scheduler/models/workload_limits.hpp"

#include <cmath>
#include <tuple>

namespace ipusim::scheduler {
namespace {

// The projections, in Keras's weight order, and their weights' names.
constexpr const char* kAttentionParts[] = {"query", "key", "value", "output"};

// `l` with its kernel and bias initializers and regularizers (read from
// Keras's kernel_* and bias_* keys) given to each projection's own weights.
LayerSpec withWeightsPerProjection(const LayerSpec& l) {
  LayerSpec out = l;
  for (const char* generic : {"kernel", "bias"}) {
    const auto init = l.initializers.find(generic);
    const auto reg = l.regularizers.find(generic);
    for (const char* part : kAttentionParts) {
      const std::string name = std::string(part) + "_" + generic;
      if (init != l.initializers.end() && !out.initializers.count(name)) out.initializers[name] = init->second;
      if (reg != l.regularizers.end() && !out.regularizers.count(name)) out.regularizers[name] = reg->second;
    }
    out.initializers.erase(generic);
    out.regularizers.erase(generic);
  }
  return out;
}

// The Keras masks a call reads (an Embedding's mask_zero, carried): the
// query's, and the value's or key's (Keras ANDs them: both mask the keys).
// Every mask is the token ids of the model's one ids input, [batch, steps].
struct KerasMasks {
  std::size_t ids = kNoMask;  // the ids, [batch, steps], or kNoMask without a mask
  bool query = false, value = false;
};

KerasMasks kerasMasks(TrainingGraphBuilder& b, const LayerSpec& l, const std::vector<std::size_t>& inputs,
                      std::uint64_t Tq, std::uint64_t Tv) {
  KerasMasks m;
  const std::size_t query = b.maskOf(inputs[0]), value = b.maskOf(inputs[1]);
  const std::size_t key = inputs.size() > 2 ? b.maskOf(inputs[2]) : kNoMask;
  for (std::size_t ids : {query, value, key}) {
    if (ids == kNoMask) continue;
    if (m.ids != kNoMask && ids != m.ids)
      throw std::invalid_argument("layer '" + l.name + "': its inputs carry different masks (not modelled)");
    m.ids = ids;
  }
  if (m.ids == kNoMask) return m;
  m.query = query != kNoMask;
  m.value = value != kNoMask || key != kNoMask;
  const std::uint64_t steps = b.graph().values[m.ids].numElements() / b.batch();
  for (auto [masked, what, T] : {std::tuple<bool, const char*, std::uint64_t>{m.query, "query", Tq}, {m.value, "value", Tv}})
    if (masked && steps != T)
      throw std::invalid_argument("layer '" + l.name + "': the mask of its " + what + " has " +
                                  std::to_string(steps) + " steps, the " + what + " " + std::to_string(T) +
                                  " (the shapes do not fit)");
  m.ids = b.reshape(m.ids, {b.batch(), steps}, l.name, "mask_ids");
  return m;
}

class MultiHeadAttentionLayer final : public Layer {
 public:
  std::vector<std::string> kinds() const override { return {layer_kind::kMultiHeadAttention}; }
  std::vector<std::string> kerasClasses() const override { return {"MultiHeadAttention"}; }
  Arity arity() const override { return {2, 3, "reads a query, a value and optionally a key (2 or 3 inputs)"}; }
  // Keras: the query's, value's and key's masks become the attention mask;
  // the output keeps the query's.
  MaskUse maskUse(const LayerSpec&) const override { return MaskUse::Consumes; }
  std::set<std::string> workloadKeys(const std::string&) const override {
    return {"num_heads", "key_dim", "value_dim", "output_shape", "dropout", "use_bias", "use_causal_mask", "seed"};
  }

  void readWorkload(const WorkloadReader& l, LayerSpec& spec) const override {
    for (const char* key : {"num_heads", "key_dim"})
      if (!l.has(key)) l.fail(l.key(key), "missing (expected a positive integer)");
    spec.heads = l.count32("num_heads", 0, true);
    spec.keyDim = l.count32("key_dim", 0, true);
    spec.valueDim = l.has("value_dim") ? l.count32("value_dim", 0, true) : spec.keyDim;
    spec.units = l.has("output_shape") ? l.count32("output_shape", 0, true) : 0;
    spec.rate = l.numberIn("dropout", 0, 0, 1, true);
    spec.useBias = l.boolean("use_bias", true);
    spec.causalMask = l.boolean("use_causal_mask", false);
    spec.seeded = l.has("seed");
    spec.seed = l.count("seed", 0, false);
  }

  void readKeras(KerasConfig& c, const std::string&, LayerSpec& spec) const override {
    spec.kind = layer_kind::kMultiHeadAttention;
    spec.heads = positive(c, "num_heads", true, 0);
    spec.keyDim = positive(c, "key_dim", true, 0);
    spec.valueDim = positive(c, "value_dim", false, spec.keyDim);
    spec.rate = c.number("dropout", 0);
    if (!(spec.rate >= 0 && spec.rate < 1)) c.fail("dropout", "expected a number in [0, 1), got " + c.at("dropout").dump());
    spec.useBias = c.boolean("use_bias", true);
    // output_shape: the output's last axis (null: the query's); more axes are not modelled.
    if (c.has("output_shape") && !c.isNull("output_shape")) {
      const nlohmann::json& o = c.at("output_shape");
      const nlohmann::json& n = o.is_array() && o.size() == 1 ? o[0] : o;
      if (!n.is_number_integer() || n.get<std::int64_t>() <= 0 || n.get<std::int64_t>() > 0xffffffffll)
        c.fail("output_shape", "expected a positive integer (one output axis) or null, got " + o.dump());
      spec.units = std::uint32_t(n.get<std::int64_t>());
    }
    c.ignore({"output_shape"});
    // attention_axes: the steps (axis 1 of [batch, steps, features]) are modelled.
    if (c.has("attention_axes") && !c.isNull("attention_axes")) {
      const nlohmann::json& a = c.at("attention_axes");
      const nlohmann::json& axis = a.is_array() && a.size() == 1 ? a[0] : a;
      if (!axis.is_number_integer() || (axis.get<std::int64_t>() != 1 && axis.get<std::int64_t>() != -2))
        c.fail("attention_axes", a.dump() + ": attention over the steps (axis 1 of [batch, steps, features]) is modelled");
    }
    c.ignore({"attention_axes"});
    c.requireInitializer("kernel_initializer", {"GlorotUniform"});
    c.requireInitializer("bias_initializer", {"Zeros"});
    readPenalties(c, {"kernel", "bias"});
    // The dropout's seed (ipusim draws its masks from it, as Dropout's).
    spec.seeded = c.has("seed");
    c.ignore({"seed"});
    const std::int64_t seed = spec.seeded ? c.integer("seed", 0) : 0;
    if (seed < 0) c.fail("seed", "expected a non-negative integer, got " + c.at("seed").dump());
    spec.seed = std::uint64_t(seed);
    // TF 2.x records the shapes it was built with (the graph gives them);
    // flash attention is another kernel for the same values.
    c.ignore({"query_shape", "key_shape", "value_shape", "flash_attention"});
  }

  void readKerasCall(KerasConfig& k, LayerSpec& spec) const override {
    spec.causalMask = k.boolean("use_causal_mask", false);
    if (k.boolean("return_attention_scores", false))
      k.fail("return_attention_scores", "true (a second output, the scores) is not modelled");
    k.requireNull("attention_mask", "an attention mask");
    for (const char* mask : {"query_mask", "value_mask", "key_mask"}) k.requireNull(mask, "masks");
    // key=None is Keras's default (the value is the key); a key tensor is an operand, not a keyword here.
    k.requireNull("key", "a key that is not a tensor");
    k.ignore({"training"});
    k.check();
  }

  Shape outputShape(LayerSpec& l, const std::vector<Shape>& in, const LayerFail& fail) const override {
    const char* names[] = {"query", "value", "key"};
    for (std::size_t i = 0; i < in.size(); ++i)
      if (in[i].size() != 2)
        fail("attention_axes", std::string("the ") + names[i] + " is " + shapeText(in[i]) +
                                   ": inputs of [steps, features] (rank 3 with the batch) are modelled");
    if (in.size() == 3 && in[2][0] != in[1][0])
      fail("", "the key has " + std::to_string(in[2][0]) + " steps, the value " + std::to_string(in[1][0]) +
                   " (they must have the same)");
    if (!l.units) l.units = std::uint32_t(in[0][1]);
    return {in[0][0], l.units};
  }

  void checkLimits(const LayerSpec& l, std::uint32_t batch, const LayerFail& fail) const override {
    constexpr std::uint64_t kFloat = 4;
    const WideCount scores = WideCount(batch) * l.heads * l.inputShapes[0][0] * l.inputShapes[1][0] * kFloat;
    if (scores > kMaxTensorBytes)
      fail("num_heads", std::to_string(l.heads) + " heads over " + std::to_string(l.inputShapes[0][0]) + " x " +
                            std::to_string(l.inputShapes[1][0]) + " steps need " + wideText(scores) +
                            " bytes of float scores (batch " + std::to_string(batch) + "); " + tensorLimitText());
    // Each projection's kernel, blamed on the size that makes it: the query
    // and key kernels grow with key_dim, the value kernel with value_dim,
    // the output kernel [heads x value_dim, output_shape] with output_shape.
    const char* names[] = {"query", "value", "key"};
    for (std::size_t i = 0; i < l.inputShapes.size(); ++i) {
      const bool value = i == 1;
      const WideCount weights = WideCount(l.inputShapes[i][1]) * l.heads * (value ? l.valueDim : l.keyDim) * kFloat;
      if (weights > kMaxTensorBytes)
        fail(value ? "value_dim" : "key_dim", std::string("the ") + names[i] + " projection needs " + wideText(weights) +
                                                  " bytes of float weights; " + tensorLimitText());
    }
    const WideCount output = WideCount(l.heads) * l.valueDim * l.units * kFloat;
    if (output > kMaxTensorBytes)
      fail("output_shape", std::to_string(l.units) + ": the output projection needs " + wideText(output) +
                               " bytes of float weights (" + std::to_string(l.heads) + " heads x " +
                               std::to_string(l.valueDim) + " value_dim x " + std::to_string(l.units) + "); " +
                               tensorLimitText());
  }

  bool hasWeights(const LayerSpec&) const override { return true; }
  Footprint footprint(const LayerSpec& l) const override {
    const long double H = l.heads, dk = l.keyDim, dv = l.valueDim, units = l.units;
    const Shape& q = l.inputShapes.at(0);
    const Shape& v = l.inputShapes.at(1);
    const Shape& k = l.inputShapes.size() > 2 ? l.inputShapes[2] : v;
    Footprint f;
    f.weights = {{"query_kernel", q[1] * H * dk}, {"key_kernel", k[1] * H * dk}, {"value_kernel", v[1] * H * dv},
                 {"output_kernel", H * dv * units}};
    if (l.useBias)
      for (auto w : {std::pair<const char*, long double>{"query_bias", H * dk}, {"key_bias", H * dk}, {"value_bias", H * dv},
                     {"output_bias", units}})
        f.weights.push_back(w);
    // The backward pass keeps the inputs, the heads' projections, the
    // probabilities (twice with dropout) and the context.
    const long double Tq = q[0], Tv = v[0];
    f.kept = "attention";
    f.keptElements = Tq * q[1] + Tv * v[1] + (l.inputShapes.size() > 2 ? Tv * k[1] : 0) + H * (Tq * dk + Tv * dk + Tv * dv) +
                     (l.rate > 0 ? 2 : 1) * H * Tq * Tv + H * Tq * dv;
    return f;
  }

  std::size_t build(TrainingGraphBuilder& b, const LayerSpec& spec, std::size_t index,
                    const std::vector<std::size_t>& inputs) const override {
    const LayerSpec l = withWeightsPerProjection(spec);
    OpGraph& g = b.graph();
    CellOps ops(b, l.name);
    const std::uint64_t B = b.batch(), H = l.heads, dk = l.keyDim, dv = l.valueDim;
    const Shape& qShape = l.inputShapes.at(0);
    const Shape& vShape = l.inputShapes.at(1);
    const Shape& kShape = inputs.size() > 2 ? l.inputShapes.at(2) : vShape;
    const std::uint64_t Tq = qShape[0], Tv = vShape[0];

    // x [B, T, features] . kernel [features, width] (+ bias), over every row.
    auto project = [&](std::size_t x, const Shape& shape, const std::string& part, std::uint64_t heads,
                       std::uint64_t dim) {
      const std::uint64_t features = shape[1], width = heads * dim;
      const std::size_t rows = b.reshape(x, {B * shape[0], features}, l.name, part + "_rows");
      // Keras's fans of a [features, heads, dim] kernel (or [heads, dim, units]): the leading axes are its receptive field.
      const std::uint64_t fanIn = part == "output" ? heads * dim : features * heads;
      const std::uint64_t fanOut = part == "output" ? heads * l.units : features * dim;
      const Shape kerasShape = part == "output" ? Shape{heads, dim, l.units} : Shape{features, heads, dim};
      const std::uint64_t out = part == "output" ? l.units : width;
      const std::uint64_t in = part == "output" ? width : features;
      const std::size_t kernel =
          b.weight(l, part + "_kernel", {in, out}, [&] { return b.glorotUniform(fanIn, fanOut); }, 0, kerasShape);
      const std::size_t used = b.cast(kernel, b.compute(), l.name + "/" + part + "_kernel_cast", l.name, ValueKind::Activation);
      std::size_t y = ops.matmul(rows, kernel, used, part + "_matmul");
      if (!l.useBias) return y;
      const std::size_t bias = b.weight(l, part + "_bias", {out}, {}, 0,
                                        part == "output" ? Shape{l.units} : Shape{heads, dim});
      const std::size_t biasUsed = b.cast(bias, b.compute(), l.name + "/" + part + "_bias_cast", l.name, ValueKind::Activation);
      return ops.addBias(y, bias, biasUsed, part + "_bias_add");
    };
    // [B x T, H x dim] -> [B x H, T, dim]: each example's heads as groups.
    auto splitHeads = [&](std::size_t x, std::uint64_t T, std::uint64_t dim, const std::string& name) {
      const std::size_t split = b.reshape(x, {B, T, H, dim}, l.name, name + "_split");
      const std::size_t moved = ops.transpose(split, {B, T, H, dim}, {0, 2, 1, 3}, name + "_heads");
      return b.reshape(moved, {B * H, T, dim}, l.name, name + "_groups");
    };

    const std::size_t query = project(inputs[0], qShape, "query", H, dk);
    const std::size_t key = project(inputs.size() > 2 ? inputs[2] : inputs[1], kShape, "key", H, dk);
    const std::size_t value = project(inputs[1], vShape, "value", H, dv);

    // The query scaled by 1 / sqrt(key_dim) (a ScaleShift; its gradient the same scale).
    const std::vector<double> scale(H * dk, 1.0 / std::sqrt(double(dk))), zeros(H * dk, 0.0);
    const std::size_t scaleConstant = addLayerConstant(b, l, "query_scale", scale);
    const std::size_t noShift = addLayerConstant(b, l, "query_no_shift", zeros);
    const std::size_t scaled = b.value(l.name + "/query_scaled", g.values[query].shape, b.compute(), ValueKind::Activation, l.name);
    g.addOp({OpKind::ScaleShift, "query_scaled", l.name, {query, scaleConstant, noShift}, {scaled}});
    b.record({query}, scaled, false, [&b, layer = l.name, query, scaleConstant, noShift](const Backward& bw) {
      OpGraph& g = b.graph();
      const std::size_t dq = b.value(layer + "/query_scaled_grad", g.values[query].shape, b.compute(), ValueKind::Gradient, layer);
      g.addOp({OpKind::ScaleShift, "query_scaled_grad", layer, {bw.grad, scaleConstant, noShift}, {dq}});
      bw.deliver(query, dq);
    });

    std::size_t scores = ops.batchMatMul(splitHeads(scaled, Tq, dk, "query"), splitHeads(key, Tv, dk, "key"), false, true, "scores");
    const KerasMasks masks = kerasMasks(b, l, inputs, Tq, Tv);
    if (masks.ids != kNoMask) {  // Keras's attention mask: the query's, value's (key's) and causal masks ANDed
      const std::size_t rows = b.reshape(scores, {B * H * Tq, Tv}, l.name, "scores_rows");
      const std::size_t masked = b.value(l.name + "/scores_masked", {B * H * Tq, Tv}, b.compute(), ValueKind::Activation, l.name);
      Op op{OpKind::IdMask, "scores_masked", l.name, {rows, masks.ids}, {masked}};
      op.index = 3;
      op.blocks = {H, masks.query ? 1u : 0u, masks.value ? 1u : 0u, l.causalMask ? 1u : 0u};
      op.scale = b.compute() == ir::DType::Half ? -3e4 : -1e9;  // Keras's _large_negative_number
      g.addOp(op);
      b.record({rows}, masked, false, [rows](const Backward& bw) { bw.deliver(rows, bw.grad); });
      scores = masked;
    } else if (l.causalMask) {  // a constant over each group's [Tq, Tv] scores: the gradient passes unchanged
      const double hidden = b.compute() == ir::DType::Half ? -3e4 : -1e9;
      std::vector<double> adder(Tq * Tv, 0.0);
      for (std::uint64_t i = 0; i < Tq; ++i)
        for (std::uint64_t j = i + 1; j < Tv; ++j) adder[i * Tv + j] = hidden;
      const std::size_t mask = addLayerConstant(b, l, "causal_mask", adder);
      const std::size_t rows = b.reshape(scores, {B * H, Tq * Tv}, l.name, "scores_rows");
      const std::size_t masked = b.value(l.name + "/scores_masked", {B * H, Tq * Tv}, b.compute(), ValueKind::Activation, l.name);
      g.addOp({OpKind::AddBias, "scores_masked", l.name, {rows, mask}, {masked}});
      b.record({rows}, masked, false, [rows](const Backward& bw) { bw.deliver(rows, bw.grad); });
      scores = masked;
    }
    std::size_t probs = addSoftmax(b, l.name, b.reshape(scores, {B * H * Tq, Tv}, l.name, "scores_per_query"), 1);
    if (l.rate > 0) probs = ops.dropout(probs, l.rate, dropoutSeed(b.workload(), index), "attention_dropout");  // Dropout's masks
    const std::size_t context = ops.batchMatMul(b.reshape(probs, {B * H, Tq, Tv}, l.name, "probabilities"),
                                                splitHeads(value, Tv, dv, "value"), false, false, "context");
    // [B x H, Tq, dv] -> [B x Tq, H x dv], then the output projection.
    const std::size_t grouped = b.reshape(context, {B, H, Tq, dv}, l.name, "context_groups");
    const std::size_t merged = ops.transpose(grouped, {B, H, Tq, dv}, {0, 2, 1, 3}, "context_steps");
    const std::size_t out = project(merged, {Tq, H * dv}, "output", H, dv);
    const std::size_t shaped = b.shaped(out, l.outputShape, l.name, "unrows");
    if (masks.query) b.setMask(shaped, b.maskOf(inputs[0]));  // Keras: the output keeps the query's mask
    return shaped;
  }

 private:
  static std::uint32_t positive(KerasConfig& c, const char* key, bool required, std::uint32_t def) {
    if (!required && (!c.has(key) || c.isNull(key))) {
      c.ignore({key});
      return def;
    }
    return c.count32(key);
  }
};

}  // namespace

std::unique_ptr<Layer> makeMultiHeadAttentionLayer() { return std::make_unique<MultiHeadAttentionLayer>(); }

}  // namespace ipusim::scheduler
