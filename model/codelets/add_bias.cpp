// AddBias: out[r][c] = in[r][c] + bias[c] (in, out: rows x cols; bias: cols).
// AddBias<half>: every field half.
// Timing is one worker of popops' BroadcastVectorOuterByRow1D ADD (see
// cycle_model.hpp), one outer iteration per row:
//   kBroadcastVertexOverhead
//   + rows * (kBroadcastRowOverhead + ceil(cols / elementsPerVector) * kBroadcastAddCyclesPerVector)
// (2 floats or 4 halves per vector).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

namespace ipusim::model {
namespace {

IPUSIM_KERNEL void addBias(const float* __restrict in, const float* __restrict bias, float* __restrict out,
                           std::uint64_t rows, std::uint64_t cols) {
  for (std::uint64_t r = 0; r < rows; ++r) {
    const float* __restrict inRow = in + r * cols;
    float* __restrict outRow = out + r * cols;
    vec::forEach(cols, [=](std::uint64_t c) { outRow[c] = inRow[c] + bias[c]; });
  }
}

class AddBias final : public FlatCodelet<AddBias> {
 public:
  // vectorType: the element type of the vector loop the cycles count.
  explicit AddBias(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "AddBias"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In},
            {"bias", ir::DType::Float, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rows", "cols"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows"), cols = check.dimension("cols");
    const std::string matrix = "rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols);
    check.expectSize("in", rows * cols, matrix);
    check.expectSize("bias", cols, "cols");
    check.expectSize("out", rows * cols, matrix);
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto rows = std::uint64_t(shape.params[0]), cols = std::uint64_t(shape.params[1]);
    return cycles::broadcastRowsCycles(rows, cols, target, vectorType_);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), cols = std::uint64_t(params[1]);
    addBias(f[0].as<const float>(), f[1].as<const float>(), f[2].as<float>(), rows, cols);
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addAddBiasCodelet(CodeletRegistry& registry) { addFloatAndHalf<AddBias>(registry); }

}  // namespace ipusim::model
