// ReluGrad, SigmoidGrad, TanhGrad, GeluGrad: gradOut = gradIn * f'(.).
// `activation` is what the derivative reads: the forward output for relu
// (gradOut = activation > 0 ? gradIn : 0, a select), sigmoid (out (1 - out))
// and tanh (1 - out^2); the forward input x for gelu (Phi(x) + x phi(x), the
// exact erf form). Half variants: every field half (HalfCodelet).
// Timing: popnn's NonLinearityGrad2D frame (kNonLinearityGradVertexOverhead)
// with the per-vector costs of cycle_model.hpp, popnn's
// getNonLinearityGradOpCycles for RELU, SIGMOID and TANH (3, 2 floats or 4
// halves a vector: f16v4cmpgt exists as f32v2cmpgt does) and GELU_ERF (30
// float, 15 half: PopLibs' placeholders).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <cmath>

namespace ipusim::model {
namespace {

struct ReluGradOp {
  static constexpr const char* kName = "ReluGrad";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kReluGradCyclesPerVector;
  // gradIn is loaded unconditionally, so the select vectorises.
  static float apply(float out, float grad) { return out > 0.0f ? grad : 0.0f; }
};
struct SigmoidGradOp {
  static constexpr const char* kName = "SigmoidGrad";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kSigmoidTanhGradCyclesPerVector;
  static float apply(float out, float grad) { return grad * (out * (1.0f - out)); }
};
struct TanhGradOp {
  static constexpr const char* kName = "TanhGrad";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kSigmoidTanhGradCyclesPerVector;
  static float apply(float out, float grad) { return grad * (1.0f - out * out); }
};
struct GeluGradOp {
  static constexpr const char* kName = "GeluGrad";
  static constexpr ir::Cycles kCyclesPerVector = cycles::kGeluGradCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = cycles::kGeluGradHalfCyclesPerVector;
  static float apply(float x, float grad) {
    constexpr float kInvSqrt2 = 0.70710678118654752f, kInvSqrt2Pi = 0.39894228040143268f;
    return grad * (0.5f * (1.0f + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x));
  }
};

template <class Op>
IPUSIM_KERNEL void applyGrad(const float* __restrict reads, const float* __restrict gradIn, float* __restrict gradOut,
                             std::uint64_t n) {
  vec::forEach(n, [=](std::uint64_t i) { gradOut[i] = Op::apply(reads[i], gradIn[i]); });
}

template <class Op>
class NonLinearityGrad final : public FlatCodelet<NonLinearityGrad<Op>> {
 public:
  explicit NonLinearityGrad(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return Op::kName; }
  std::vector<FieldSpec> fields() const override {
    return {{"activation", ir::DType::Float, FieldAccess::In},
            {"gradIn", ir::DType::Float, FieldAccess::In},
            {"gradOut", ir::DType::Float, FieldAccess::Out}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("gradIn", "activation");
    check.expectSameSize("gradOut", "activation");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kNonLinearityGradVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * cyclesPerVector<Op>(vectorType_);
  }
  void computeFlat(const FieldData* f, const double*) const {
    applyGrad<Op>(f[0].as<const float>(), f[1].as<const float>(), f[2].as<float>(), f[2].size);
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addNonLinearityGradCodelets(CodeletRegistry& registry) {
  addFloatAndHalf<NonLinearityGrad<ReluGradOp>>(registry);
  addFloatAndHalf<NonLinearityGrad<SigmoidGradOp>>(registry);
  addFloatAndHalf<NonLinearityGrad<TanhGradOp>>(registry);
  addFloatAndHalf<NonLinearityGrad<GeluGradOp>>(registry);
}

}  // namespace ipusim::model
