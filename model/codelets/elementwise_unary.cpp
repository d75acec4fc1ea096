// Relu, Exp, Log, Neg, Square, Sigmoid, Tanh, Gelu: out = f(in) over
// equal-sized float vectors, and their half variants Relu<half> ... (in and
// out half; HalfCodelet). Gelu is the exact form, 0.5 x (1 + erf(x / sqrt 2))
// (Keras's default, approximate=False).
// Timing is popops' UnaryOp2D estimate for one region (popopsCycleEstimators.cpp,
// with the unaryOpPerfInfo table of popopsCycleEstimators.hpp):
//   kUnaryOpVertexOverhead + ceil(n / elementsPerVector) * cyclesPerVector(op),
// elementsPerVector being 2 floats or 4 halves; Exp and Log cost
// kExp/kLogHalfCyclesPerVector per 4 halves (popops EXPONENT/LOGARITHM HALF,
// f16v2exp / f16v2ln), the other ops their float entry's cost per vector.
// Gelu is popops' GELU_ERF, whose loop takes one element (Op::kElementsPerLoop):
//   kUnaryOpVertexOverhead + n * kGelu(Half)CyclesPerElement.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <cmath>

namespace ipusim::model {
namespace {

struct ReluOp {
  static constexpr const char* kName = "Relu";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kReluCyclesPerVector;
  static float apply(float x) { return x > 0.0f ? x : 0.0f; }
};
struct ExpOp {
  static constexpr const char* kName = "Exp";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kExpCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = cycles::kExpHalfCyclesPerVector;
  static float apply(float x) { return std::exp(x); }
};
struct LogOp {
  static constexpr const char* kName = "Log";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kLogCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = cycles::kLogHalfCyclesPerVector;
  static float apply(float x) { return std::log(x); }
};
struct NegOp {
  static constexpr const char* kName = "Neg";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kNegCyclesPerVector;
  static float apply(float x) { return -x; }
};
struct SquareOp {
  static constexpr const char* kName = "Square";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kSquareCyclesPerVector;
  static float apply(float x) { return x * x; }
};

struct SigmoidOp {
  static constexpr const char* kName = "Sigmoid";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kSigmoidCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = cycles::kSigmoidHalfCyclesPerVector;
  static float apply(float x) { return 1.0f / (1.0f + std::exp(-x)); }
};
struct TanhOp {
  static constexpr const char* kName = "Tanh";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kTanhCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = cycles::kTanhHalfCyclesPerVector;
  static float apply(float x) { return std::tanh(x); }
};
struct GeluOp {
  static constexpr const char* kName = "Gelu";
  static constexpr std::uint64_t kElementsPerLoop = 1;  // popops GELU_ERF {c, false, 1}
  static constexpr ir::Cycles kCyclesPerVector = cycles::kGeluCyclesPerElement;  // per loop
  static constexpr ir::Cycles kHalfCyclesPerVector = cycles::kGeluHalfCyclesPerElement;
  static float apply(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
};

template <class Op>
IPUSIM_KERNEL void applyUnary(const float* __restrict in, float* __restrict out, std::uint64_t n) {
  vec::forEach(n, [=](std::uint64_t i) { out[i] = Op::apply(in[i]); });
}

template <class Op>
class ElementwiseUnary final : public FlatCodelet<ElementwiseUnary<Op>> {
 public:
  // vectorType: the element type of the vector loop the cycles count.
  explicit ElementwiseUnary(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return Op::kName; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kUnaryOpVertexOverhead + loopsOf<Op>(shape.fieldSizes[0], target, vectorType_) * cyclesPerVector<Op>(vectorType_);
  }
  void computeFlat(const FieldData* f, const double*) const {
    applyUnary<Op>(f[0].as<const float>(), f[1].as<float>(), f[1].size);
  }

 private:
  ir::DType vectorType_;
};


}  // namespace

void addElementwiseUnaryCodelets(CodeletRegistry& registry) {
  addFloatAndHalf<ElementwiseUnary<ReluOp>>(registry);
  addFloatAndHalf<ElementwiseUnary<ExpOp>>(registry);
  addFloatAndHalf<ElementwiseUnary<LogOp>>(registry);
  addFloatAndHalf<ElementwiseUnary<NegOp>>(registry);
  addFloatAndHalf<ElementwiseUnary<SquareOp>>(registry);
  addFloatAndHalf<ElementwiseUnary<SigmoidOp>>(registry);
  addFloatAndHalf<ElementwiseUnary<TanhOp>>(registry);
  addFloatAndHalf<ElementwiseUnary<GeluOp>>(registry);
}

}  // namespace ipusim::model
