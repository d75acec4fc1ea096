// IdMask: a Keras mask (Embedding's mask_zero: a step is kept where its token
// id is not 0) written out as the rows of a gate: out[r][c] = (ids[r] != 0)
// (or, with padding = 1, (ids[r] == 0): the complement) for every c of cols.
// Fields ids (int, rows), out (rows x cols); params rows, cols, padding.
// IdMask<half>: out half.
// Timing: an estimate, as AddBias (one worker of popops'
// BroadcastVectorOuterByRow1D): per row, one compare of the id then a
// broadcast store of the row, at the broadcast's cycles per vector:
//   kBroadcastVertexOverhead + rows * (kBroadcastRowOverhead + vectors(cols) * kBroadcastAddCyclesPerVector)
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

}  // namespace

void addIdMaskCodelet(CodeletRegistry& registry) {
  registry.add(std::make_unique<IdMask>());
  auto half = std::make_unique<IdMask>(ir::DType::Half);
  std::string name = typedCodeletName(half->name(), {ir::DType::Half});
  registry.add(std::make_unique<HalfCodelet>(std::move(name), std::move(half),
                                             std::vector<ir::DType>{ir::DType::Int, ir::DType::Half}));
}

}  // namespace ipusim::model
