// IdMask: a Keras mask (Embedding's mask_zero: a step is kept where its token
// id is not 0) written out as the rows of a gate: out[r][c] = (ids[r] != 0)
// (or, with padding = 1, (ids[r] == 0): the complement) for every c of cols.
// Fields ids (int, rows), out (rows x cols); params rows, cols, padding.
// IdMask<half>: out half.
// IdMaskMean: a masked mean's weights (Keras's GlobalAveragePooling1D under a
// mask: sum_t x m / sum_t m, as the mean over the steps of x w): for each of
// `examples` rows of `steps` ids, out[e][t][c] = (ids[e][t] != 0) x (steps /
// the example's count of non-zero ids) for every c of cols (NaN where an
// example has no step kept, as Keras's 0 / 0). Fields ids (int, examples x
// steps), out (examples x steps x cols). IdMaskMean<half>: out half.
// Timing: an estimate, as AddBias (one worker of popops'
// BroadcastVectorOuterByRow1D): per row, one compare of the id then a
// broadcast store of the row, at the broadcast's cycles per vector:
//   kBroadcastVertexOverhead + rows * (kBroadcastRowOverhead + vectors(cols) * kBroadcastAddCyclesPerVector)
// IdMaskMean the same over its examples x steps rows, plus per example a
// count of its ids (one cycle per id) and a divide (kDivideCycles: popops'
// DIVIDE, one vector).
// IdMaskScores: attention scores under Keras's attention mask (the query's
// and the value's masks and the causal mask, ANDed, as MultiHeadAttention's
// _compute_attention_mask; then Softmax's adder): rows of `valueSteps`
// scores, row r of the [examples x heads x querySteps, valueSteps] scores
// being query step i = r % querySteps of example r / (heads x querySteps);
// out[r][j] = in[r][j] + (kept ? 0 : hidden), kept = (!query || ids[e][i]
// != 0) && (!value || ids[e][j] != 0) && (!causal || j <= i). Fields ids
// (int: the steps of the examples the rows span, from example firstRow /
// (heads x querySteps)), in, out (rows x valueSteps); params firstRow, rows,
// heads, querySteps, valueSteps, steps (the ids' per example), query, value,
// causal, hidden (the adder:
// Keras's _large_negative_number, -1e9, or -3e4 in float16).
// IdMaskLossWeights: a masked loss's row weights, as Keras's apply_mask
// weighs a mean loss: out[r] = (ids[r] != 0) x (rows / (kept + epsilon)),
// kept the count of non-zero ids, epsilon Keras's backend.epsilon() (1e-7),
// in float as Keras computes it. Fields ids (int, rows), out (float, rows);
// param rows. Timing an estimate: one cycle per id counted, popops' DIVIDE
// (one vector), and the broadcast store of the rows.
// IdMaskFromValues: Keras's Masking, a mask from values: out[r] = 1 where
// any of row r's cols values differs from maskValue, else 0 (int, read as
// token ids are: 0 masks the step). Fields in (rows x cols), out (int,
// rows); params rows, cols, maskValue. IdMaskFromValues<half>: in half.
// Timing an estimate, as the broadcast over the rows (a compare per vector
// and the any-reduction folded into it).
// IdMaskScores<half>: in and out half. Timing as IdMask over its rows (a
// broadcast add of the row's adder), an estimate: TF builds the adder with
// popops' elementwise ops and adds it, which one fused vertex stands for.
// (popops has no such vertex: TF on an IPU computes a mask with popops'
// elementwise ops, which this one fused vertex stands for).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"

#include <stdexcept>

namespace ipusim::model {
namespace {

class IdMask final : public FlatCodelet<IdMask> {
 public:
  explicit IdMask(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "IdMask"; }
  std::vector<FieldSpec> fields() const override {
    return {{"ids", ir::DType::Int, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rows", "cols", "padding"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows"), cols = check.dimension("cols");
    const double padding = check.param("padding");
    if (padding != 0 && padding != 1)
      throw std::invalid_argument(name() + ": padding " + std::to_string(padding) + " is not 0 or 1");
    check.expectSize("ids", rows, "rows");
    check.expectSize("out", rows * cols, "rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols));
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto rows = std::uint64_t(shape.params[0]), cols = std::uint64_t(shape.params[1]);
    return cycles::broadcastRowsCycles(rows, cols, target, vectorType_);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), cols = std::uint64_t(params[1]);
    const bool padding = params[2] != 0;
    const std::int32_t* ids = f[0].as<const std::int32_t>();
    float* out = f[1].as<float>();
    for (std::uint64_t r = 0; r < rows; ++r) {
      const float gate = (ids[r] == 0) == padding ? 1.0f : 0.0f;
      for (std::uint64_t c = 0; c < cols; ++c) out[r * cols + c] = gate;
    }
  }

 private:
  ir::DType vectorType_;
};

class IdMaskMean final : public FlatCodelet<IdMaskMean> {
 public:
  explicit IdMaskMean(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "IdMaskMean"; }
  std::vector<FieldSpec> fields() const override {
    return {{"ids", ir::DType::Int, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"examples", "steps", "cols"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto examples = check.dimension("examples"), steps = check.dimension("steps"), cols = check.dimension("cols");
    check.expectSize("ids", examples * steps, "examples x steps");
    check.expectSize("out", examples * steps * cols, "examples x steps x cols");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto examples = std::uint64_t(shape.params[0]), steps = std::uint64_t(shape.params[1]);
    const auto cols = std::uint64_t(shape.params[2]);
    // The broadcast store of every example's steps, plus per example its count and divide.
    return cycles::broadcastRowsCycles(examples * steps, cols, target, vectorType_) +
           examples * (steps + cycles::kDivideCyclesPerVector);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto examples = std::uint64_t(params[0]), steps = std::uint64_t(params[1]), cols = std::uint64_t(params[2]);
    const std::int32_t* ids = f[0].as<const std::int32_t>();
    float* out = f[1].as<float>();
    for (std::uint64_t e = 0; e < examples; ++e) {
      std::uint64_t kept = 0;
      for (std::uint64_t t = 0; t < steps; ++t) kept += ids[e * steps + t] != 0;
      const float scale = float(steps) / float(kept);  // inf with none kept: 0 x inf is NaN, as Keras's 0 / 0
      for (std::uint64_t t = 0; t < steps; ++t) {
        const float w = float(ids[e * steps + t] != 0) * scale;
        for (std::uint64_t c = 0; c < cols; ++c) out[(e * steps + t) * cols + c] = w;
      }
    }
  }

 private:
  ir::DType vectorType_;
};

class IdMaskScores final : public FlatCodelet<IdMaskScores> {
 public:
  explicit IdMaskScores(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "IdMaskScores"; }
  std::vector<FieldSpec> fields() const override {
    return {{"ids", ir::DType::Int, FieldAccess::In},
            {"in", ir::DType::Float, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override {
    return {"firstRow", "rows", "heads", "querySteps", "valueSteps", "steps", "query", "value", "causal", "hidden"};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows"), heads = check.dimension("heads");
    const auto querySteps = check.dimension("querySteps"), valueSteps = check.dimension("valueSteps");
    const auto firstRow = std::uint64_t(check.param("firstRow")), steps = check.dimension("steps");
    for (const char* flag : {"query", "value", "causal"})
      if (check.param(flag) != 0 && check.param(flag) != 1)
        throw std::invalid_argument(name() + ": " + flag + " " + std::to_string(check.param(flag)) + " is not 0 or 1");
    const std::uint64_t perExample = heads * querySteps;
    const std::uint64_t examples = (firstRow + rows - 1) / perExample - firstRow / perExample + 1;
    if ((check.param("query") != 0 && steps != querySteps) || (check.param("value") != 0 && steps != valueSteps))
      throw std::invalid_argument(name() + ": the ids' " + std::to_string(steps) + " steps do not match the masked steps");
    check.expectSize("ids", examples * steps, "the steps of the " + std::to_string(examples) + " examples spanned");
    check.expectSize("in", rows * valueSteps, "rows x valueSteps");
    check.expectSize("out", rows * valueSteps, "rows x valueSteps");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto rows = std::uint64_t(shape.params[1]), cols = std::uint64_t(shape.params[4]);
    return cycles::broadcastRowsCycles(rows, cols, target, vectorType_);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto firstRow = std::uint64_t(params[0]), rows = std::uint64_t(params[1]), heads = std::uint64_t(params[2]);
    const auto Tq = std::uint64_t(params[3]), Tv = std::uint64_t(params[4]);
    const auto steps = std::uint64_t(params[5]);
    const bool query = params[6] != 0, value = params[7] != 0, causal = params[8] != 0;
    const float hidden = float(params[9]);
    const std::uint64_t firstExample = firstRow / (heads * Tq);
    const std::int32_t* ids = f[0].as<const std::int32_t>();
    const float* in = f[1].as<const float>();
    float* out = f[2].as<float>();
    for (std::uint64_t r = 0; r < rows; ++r) {
      const std::uint64_t row = firstRow + r, i = row % Tq;
      const std::int32_t* example = ids + (row / (heads * Tq) - firstExample) * steps;
      const bool queryKept = !query || example[i] != 0;
      for (std::uint64_t j = 0; j < Tv; ++j) {
        const bool kept = queryKept && (!value || example[j] != 0) && (!causal || j <= i);
        out[r * Tv + j] = kept ? in[r * Tv + j] : in[r * Tv + j] + hidden;
      }
    }
  }

 private:
  ir::DType vectorType_;
};

class IdMaskFromValues final : public FlatCodelet<IdMaskFromValues> {
 public:
  explicit IdMaskFromValues(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "IdMaskFromValues"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Int, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rows", "cols", "maskValue"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows"), cols = check.dimension("cols");
    check.expectSize("in", rows * cols, "rows x cols");
    check.expectSize("out", rows, "rows");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::broadcastRowsCycles(std::uint64_t(shape.params[0]), std::uint64_t(shape.params[1]), target, vectorType_);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), cols = std::uint64_t(params[1]);
    const float maskValue = float(params[2]);
    const float* in = f[0].as<const float>();
    std::int32_t* out = f[1].as<std::int32_t>();
    for (std::uint64_t r = 0; r < rows; ++r) {
      bool kept = false;
      for (std::uint64_t c = 0; c < cols && !kept; ++c) kept = in[r * cols + c] != maskValue;
      out[r] = kept ? 1 : 0;
    }
  }

 private:
  ir::DType vectorType_;
};

class IdMaskLossWeights final : public FlatCodelet<IdMaskLossWeights> {
 public:
  std::string name() const override { return "IdMaskLossWeights"; }
  std::vector<FieldSpec> fields() const override {
    return {{"ids", ir::DType::Int, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rows"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows");
    check.expectSize("ids", rows, "rows");
    check.expectSize("out", rows, "rows");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto rows = std::uint64_t(shape.params[0]);
    return cycles::kBroadcastVertexOverhead + rows + cycles::kDivideCyclesPerVector +
           cycles::vectors(rows, target, ir::DType::Float) * cycles::kBroadcastAddCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]);
    const std::int32_t* ids = f[0].as<const std::int32_t>();
    float* out = f[1].as<float>();
    float kept = 0;
    for (std::uint64_t r = 0; r < rows; ++r) kept += ids[r] != 0 ? 1.0f : 0.0f;
    const float weight = float(rows) / (kept + 1e-7f);  // Keras: mask *= total / (valid + epsilon)
    for (std::uint64_t r = 0; r < rows; ++r) out[r] = (ids[r] != 0 ? 1.0f : 0.0f) * weight;
  }
};

}  // namespace

void addIdMaskCodelet(CodeletRegistry& registry) {
  // <half>: `out` half, the ids int.
  addWithHalfActivations<IdMask>(registry, {"out"});
  addWithHalfActivations<IdMaskMean>(registry, {"out"});
  addWithHalfActivations<IdMaskScores>(registry, {"in", "out"});
  registry.add(std::make_unique<IdMaskLossWeights>());  // the loss is float whatever the model computes in
  addWithHalfActivations<IdMaskFromValues>(registry, {"in"});
}

}  // namespace ipusim::model
