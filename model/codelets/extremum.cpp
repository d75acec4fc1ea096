// The gradients of Maximum and Minimum (elementwise_binary.cpp),
// MaximumGrad / MinimumGrad: out = grad
// where the operand won, else 0, as TensorFlow's _MaximumGrad/_MinimumGrad
// (math_grad.py) route it: param `operand` 0 gives in0's gradient (in0 >= in1
// for the maximum, in0 <= in1 for the minimum: a tie goes to in0), 1 gives
// in1's (in0 < in1, in0 > in1). Half variants: every field half (HalfCodelet).
// Timing: popops' BinaryOp2D frame (kBinaryOpVertexOverhead); the cost is
// an estimate (no popops vertex does it in one pass): a
// compare (GREATER_EQUAL, {1, true}) and a select of grad or 0, each a
// vectorised op with its load/store cycles.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

namespace ipusim::model {
namespace {

// One estimate for both: compare + select, each 1 + 2 cycles a vector.
constexpr ir::Cycles kExtremumGradCyclesPerVector = 2 * cycles::kAddSubMulCyclesPerVector;

// The operand whose gradient flows: in0 on a tie.
struct MaximumOp {
  static constexpr const char* kName = "Maximum";
  static bool firstWins(float a, float b) { return a >= b; }
};
struct MinimumOp {
  static constexpr const char* kName = "Minimum";
  static bool firstWins(float a, float b) { return a <= b; }
};

template <class Op>
class ExtremumGrad final : public FlatCodelet<ExtremumGrad<Op>> {
 public:
  explicit ExtremumGrad(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return std::string(Op::kName) + "Grad"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in0", ir::DType::Float, FieldAccess::In},
            {"in1", ir::DType::Float, FieldAccess::In},
            {"grad", ir::DType::Float, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"operand"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("in1", "in0");
    check.expectSameSize("grad", "in0");
    check.expectSameSize("out", "in0");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kBinaryOpVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * kExtremumGradCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float* a = f[0].as<const float>();
    const float* b = f[1].as<const float>();
    const float* grad = f[2].as<const float>();
    float* out = f[3].as<float>();
    const bool first = p[0] == 0;
    vec::forEach(f[3].size, [=](std::uint64_t i) { out[i] = Op::firstWins(a[i], b[i]) == first ? grad[i] : 0.0f; });
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addExtremumCodelets(CodeletRegistry& registry) {
  addFloatAndHalf<ExtremumGrad<MaximumOp>>(registry);
  addFloatAndHalf<ExtremumGrad<MinimumOp>>(registry);
}

}  // namespace ipusim::model
