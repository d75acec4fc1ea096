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
    return cycles::kBroadcastVertexOverhead +
           rows * (cycles::kBroadcastRowOverhead +
                   cycles::vectors(cols, target, vectorType_) * cycles::kBroadcastAddCyclesPerVector);
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
    return cycles::kBroadcastVertexOverhead +
           examples * (steps + cycles::kDivideCyclesPerVector +
                       steps * (cycles::kBroadcastRowOverhead +
                                cycles::vectors(cols, target, vectorType_) * cycles::kBroadcastAddCyclesPerVector));
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

}  // namespace

void addIdMaskCodelet(CodeletRegistry& registry) {
  // <half>: `out` half, the ids int.
  addWithHalfActivations<IdMask>(registry, {"out"});
  addWithHalfActivations<IdMaskMean>(registry, {"out"});
}

}  // namespace ipusim::model
