// Vertices over a rows x cols tensor that read one value per column from
// short vectors (broadcast over the rows, as AddBias reads its bias): the
// activation-like layers' per-channel ops.
//   PRelu       in, alpha (cols) -> out:            in > 0 ? in : alpha in
//   PReluGrad   activation (the input x), gradIn, alpha (cols) -> gradOut:
//               x > 0 ? gradIn : x < 0 ? alpha gradIn : 0 (Keras's relu(x) - alpha relu(-x), whose
//               derivative is 0 at x = 0)
//   Normalize   in, mean, stdDev (cols) -> out:     (in - mean) / stdDev (Keras's Normalization)
//   ScaleShift  in, scale, shift (cols) -> out:     in scale + shift (Rescaling; Normalization's invert)
// Params rows, cols. Half variants <half>: every field half (HalfCodelet).
// Timing, as AddBias (one worker of popops' BroadcastVectorOuterByRow1D):
//   kBroadcastVertexOverhead + rows * (kBroadcastRowOverhead + vectors(cols) * cycles per vector),
// the cycles per vector an estimate (cycle_model.hpp: the popops operations
// of the formula plus the frame's loop overhead).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

namespace ipusim::model {
namespace {

// Op: kName, kCyclesPerVector (kHalfCyclesPerVector), kRowFields and
// kColumnFields (inputs, by name, in field order: the row inputs, then the
// column vectors, then the output), and
//   static float apply(const float* rowIn, const float* column, ...)
// through row(): one row of cols elements.
struct PReluOp {
  static constexpr const char* kName = "PRelu";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kPReluCyclesPerVector;
  static std::vector<const char*> rowFields() { return {"in"}; }
  static std::vector<const char*> columnFields() { return {"alpha"}; }
  static const char* outField() { return "out"; }
  static void row(const float* const* in, const float* const* col, float* __restrict out, std::uint64_t cols) {
    const float* __restrict x = in[0];
    const float* __restrict alpha = col[0];
    vec::forEach(cols, [=](std::uint64_t c) { out[c] = x[c] > 0.0f ? x[c] : alpha[c] * x[c]; });
  }
};
struct PReluGradOp {
  static constexpr const char* kName = "PReluGrad";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kPReluGradCyclesPerVector;
  static std::vector<const char*> rowFields() { return {"activation", "gradIn"}; }
  static std::vector<const char*> columnFields() { return {"alpha"}; }
  static const char* outField() { return "gradOut"; }
  static void row(const float* const* in, const float* const* col, float* __restrict out, std::uint64_t cols) {
    const float* __restrict x = in[0];
    const float* __restrict g = in[1];
    const float* __restrict alpha = col[0];
    vec::forEach(cols, [=](std::uint64_t c) { out[c] = x[c] > 0.0f ? g[c] : x[c] < 0.0f ? alpha[c] * g[c] : 0.0f; });
  }
};
struct NormalizeOp {
  static constexpr const char* kName = "Normalize";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kNormalizeCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = cycles::kNormalizeHalfCyclesPerVector;
  static std::vector<const char*> rowFields() { return {"in"}; }
  static std::vector<const char*> columnFields() { return {"mean", "stdDev"}; }
  static const char* outField() { return "out"; }
  static void row(const float* const* in, const float* const* col, float* __restrict out, std::uint64_t cols) {
    const float* __restrict x = in[0];
    const float* __restrict mean = col[0];
    const float* __restrict sd = col[1];
    vec::forEach(cols, [=](std::uint64_t c) { out[c] = (x[c] - mean[c]) / sd[c]; });
  }
};
struct ScaleShiftOp {
  static constexpr const char* kName = "ScaleShift";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kScaleShiftCyclesPerVector;
  static std::vector<const char*> rowFields() { return {"in"}; }
  static std::vector<const char*> columnFields() { return {"scale", "shift"}; }
  static const char* outField() { return "out"; }
  static void row(const float* const* in, const float* const* col, float* __restrict out, std::uint64_t cols) {
    const float* __restrict x = in[0];
    const float* __restrict scale = col[0];
    const float* __restrict shift = col[1];
    vec::forEach(cols, [=](std::uint64_t c) { out[c] = x[c] * scale[c] + shift[c]; });
  }
};

template <class Op>
class ColumnBroadcast final : public FlatCodelet<ColumnBroadcast<Op>> {
 public:
  explicit ColumnBroadcast(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return Op::kName; }
  std::vector<FieldSpec> fields() const override {
    std::vector<FieldSpec> f;
    for (const char* n : Op::rowFields()) f.push_back({n, ir::DType::Float, FieldAccess::In});
    for (const char* n : Op::columnFields()) f.push_back({n, ir::DType::Float, FieldAccess::In});
    f.push_back({Op::outField(), ir::DType::Float, FieldAccess::Out});
    return f;
  }
  std::vector<std::string> params() const override { return {"rows", "cols"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows"), cols = check.dimension("cols");
    const std::string matrix = "rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols);
    for (const char* n : Op::rowFields()) check.expectSize(n, rows * cols, matrix);
    for (const char* n : Op::columnFields()) check.expectSize(n, cols, "cols");
    check.expectSize(Op::outField(), rows * cols, matrix);
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto rows = std::uint64_t(shape.params[0]), cols = std::uint64_t(shape.params[1]);
    return cycles::broadcastRowsCycles(rows, cols, target, vectorType_, cyclesPerVector<Op>(vectorType_));
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), cols = std::uint64_t(params[1]);
    const std::size_t nRow = Op::rowFields().size(), nCol = Op::columnFields().size();
    const float* in[2] = {nullptr, nullptr};
    const float* col[2] = {nullptr, nullptr};
    for (std::size_t i = 0; i < nCol; ++i) col[i] = f[nRow + i].as<const float>();
    float* out = f[nRow + nCol].as<float>();
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < nRow; ++i) in[i] = f[i].as<const float>() + r * cols;
      Op::row(in, col, out + r * cols, cols);
    }
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addColumnBroadcastCodelets(CodeletRegistry& registry) {
  addFloatAndHalf<ColumnBroadcast<PReluOp>>(registry);
  addFloatAndHalf<ColumnBroadcast<PReluGradOp>>(registry);
  addFloatAndHalf<ColumnBroadcast<NormalizeOp>>(registry);
  addFloatAndHalf<ColumnBroadcast<ScaleShiftOp>>(registry);
}

}  // namespace ipusim::model
