// Add, Sub, Mul, Div, Maximum, Minimum: out = in0 op in1 over equal-sized float vectors, and
// their half variants Add<half> ... (every field half; HalfCodelet).
// Timing is popops' BinaryOp2D estimate for one region (popopsCycleEstimators.cpp):
//   kBinaryOpVertexOverhead + ceil(n / elementsPerVector) * cyclesPerVector(op),
// elementsPerVector = 2 floats or 4 halves (f16v4add/sub/mul at the float
// entry's cost per vector); Div in half costs kDivideHalfCyclesPerVector per
// 4 halves (popops DIVIDE HALF).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

namespace ipusim::model {
namespace {

struct AddOp {
  static constexpr const char* kName = "Add";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kAddSubMulCyclesPerVector;
  static float apply(float a, float b) { return a + b; }
};
struct SubOp {
  static constexpr const char* kName = "Sub";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kAddSubMulCyclesPerVector;
  static float apply(float a, float b) { return a - b; }
};
struct MulOp {
  static constexpr const char* kName = "Mul";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kAddSubMulCyclesPerVector;
  static float apply(float a, float b) { return a * b; }
};
// MAXIMUM / MINIMUM FLOAT and HALF are {1, true} in binaryOpPerfInfo, as ADD
// is (their gradients: extremum.cpp). A tie takes in0, as TensorFlow's
// _MaximumGrad routes it.
struct MaximumOp {
  static constexpr const char* kName = "Maximum";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kAddSubMulCyclesPerVector;
  static float apply(float a, float b) { return a >= b ? a : b; }
};
struct MinimumOp {
  static constexpr const char* kName = "Minimum";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kAddSubMulCyclesPerVector;
  static float apply(float a, float b) { return a <= b ? a : b; }
};
struct DivOp {
  static constexpr const char* kName = "Div";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kDivideCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = cycles::kDivideHalfCyclesPerVector;
  static float apply(float a, float b) { return a / b; }
};

template <class Op>
IPUSIM_KERNEL void applyBinary(const float* __restrict in0, const float* __restrict in1, float* __restrict out, std::uint64_t n) {
  vec::forEach(n, [=](std::uint64_t i) { out[i] = Op::apply(in0[i], in1[i]); });
}

template <class Op>
class ElementwiseBinary final : public FlatCodelet<ElementwiseBinary<Op>> {
 public:
  // vectorType: the element type of the vector loop the cycles count.
  explicit ElementwiseBinary(ir::DType vectorType = ir::DType::Float)
      : vectorType_(vectorType) {}
  std::string name() const override { return Op::kName; }
  std::vector<FieldSpec> fields() const override {
    return {{"in0", ir::DType::Float, FieldAccess::In},
            {"in1", ir::DType::Float, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::Out}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("in1", "in0");
    check.expectSameSize("out", "in0");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kBinaryOpVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * cyclesPerVector<Op>(vectorType_);
  }
  void computeFlat(const FieldData* f, const double*) const {
    applyBinary<Op>(f[0].as<const float>(), f[1].as<const float>(), f[2].as<float>(), f[2].size);
  }

 private:
  ir::DType vectorType_;
};


}  // namespace

void addElementwiseBinaryCodelets(CodeletRegistry& registry) {
  addFloatAndHalf<ElementwiseBinary<AddOp>>(registry);
  addFloatAndHalf<ElementwiseBinary<SubOp>>(registry);
  addFloatAndHalf<ElementwiseBinary<MulOp>>(registry);
  addFloatAndHalf<ElementwiseBinary<DivOp>>(registry);
  addFloatAndHalf<ElementwiseBinary<MaximumOp>>(registry);
  addFloatAndHalf<ElementwiseBinary<MinimumOp>>(registry);
}

}  // namespace ipusim::model
