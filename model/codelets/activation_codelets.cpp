// The activations beyond relu, sigmoid, tanh and gelu (elementwise_unary.cpp)
// and their gradients (beside non_linearity_grad.cpp's): Keras's formulas
// (keras/src/activations/activations.py), each forward codelet
// out = f(in, params) and each gradient gradOut = gradIn * f'(.) reading
// `activation`: the forward output where it determines the derivative, else
// the forward input (the list below). Half variants <half>: every field half
// (HalfCodelet: computed in float, rounded once per store).
//
//   codelet           params                                   computes
//   ClippedRelu       maxValue                                 min(max(x, 0), maxValue)            (relu6: 6)
//   LeakyRelu         negativeSlope                            x > 0 ? x : s x
//   BoundedLeakyRelu  maxValue, hasMax, negativeSlope, threshold  x > t ? min(x, max) : s (x - t)  (Keras's relu)
//   Elu               alpha                                    x > 0 ? x : alpha expm1(x)
//   Selu                                                       scale elu(x, alpha), Keras's constants
//   Softplus                                                   max(x, 0) + log1p(exp(-|x|))  (log(exp(x) + 1), stably)
//   Softsign                                                   x / (|x| + 1)
//   HardSigmoid       slope                                    min(max(slope x + 0.5, 0), 1)
//   HardSilu                                                   x min(max(x + 3, 0), 6) / 6
//   Mish                                                       x tanh(softplus(x))
//   Swish                                                      x sigmoid(x)  (silu)
//   GeluTanh                                                   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//
//   gradient             reads   derivative
//   ClippedReluGrad      y       0 < y < max ? 1 : 0
//   LeakyReluGrad        y       y > 0 ? 1 : s
//   BoundedLeakyReluGrad y       y > 0 ? (y < max ? 1 : 0) : s
//   EluGrad              y       y > 0 ? 1 : y + alpha              (alpha >= 0: y > 0 exactly when x > 0)
//   SeluGrad             y       y > 0 ? scale : y + scale alpha
//   SoftplusGrad         y       sigmoid(x) = 1 - exp(-y) = -expm1(-y)
//   SoftsignGrad         y       1 / (1 + |x|)^2 = (1 - |y|)^2
//   HardSigmoidGrad      y       0 < y < 1 ? slope : 0
//   HardSiluGrad         x       x <= -3 ? 0 : x >= 3 ? 1 : (2x + 3) / 6
//   MishGrad             x       t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x))
//   SwishGrad            x       s (1 + x (1 - s)), s = sigmoid(x)
//   GeluTanhGrad         x       0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 0.044715 x^2)
//   PReluAlphaGrad       x       gradOut = x < 0 ? x gradIn : 0 (PReLU's alpha gradient before its sum)
// At a kink the derivative is the one of the side below it (x = threshold:
// the negative slope, as tf.nn.leaky_relu; relu6 and clamps: 0 at both ends,
// as TF's Relu6Grad).
//
// Timing (constants and their sources in cycle_model.hpp): Swish and
// GeluTanh are popnn's NonLinearity2D SWISH and GELU (cycles::nonLinearity2DCycles);
// the other forward codelets are estimates in popops' UnaryOp2D frame,
// kUnaryOpVertexOverhead + vectors x the popops operations their formula
// takes; the gradients are in popnn's NonLinearityGrad2D frame,
// kNonLinearityGradVertexOverhead + vectors x cycles per vector (SWISH's and
// GELU's from popnn, the others estimates likewise).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ipusim::model {
namespace {

namespace c = cycles;

// Keras's SELU constants (jax.nn.selu, tf.nn.selu; the docstring rounds them).
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSeluScale = 1.0507009873554804934193349852946f;
constexpr float kSqrt2OverPi = 0.79788456080286535588f;  // sqrt(2 / pi), as popnn's GELU
constexpr float kGeluCubic = 0.044715f;

float sigmoidOf(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float softplusOf(float x) { return std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); }

struct NoParams {
  static std::vector<std::string> names() { return {}; }
  static NoParams read(const double*) { return {}; }
};

// ---- forward ----

struct ClippedReluOp {
  static constexpr const char* kName = "ClippedRelu";
  static constexpr ir::Cycles kCyclesPerVector = c::kClippedReluCyclesPerVector;
  struct Params {
    float max;
    static std::vector<std::string> names() { return {"maxValue"}; }
    static Params read(const double* p) { return {float(p[0])}; }
  };
  static float apply(float x, const Params& p) { return std::min(std::max(x, 0.0f), p.max); }
};
struct LeakyReluOp {
  static constexpr const char* kName = "LeakyRelu";
  static constexpr ir::Cycles kCyclesPerVector = c::kLeakyReluCyclesPerVector;
  struct Params {
    float slope;
    static std::vector<std::string> names() { return {"negativeSlope"}; }
    static Params read(const double* p) { return {float(p[0])}; }
  };
  static float apply(float x, const Params& p) { return x > 0.0f ? x : p.slope * x; }
};
struct BoundedLeakyReluParams {
  float max, hasMax, slope, threshold;
  static std::vector<std::string> names() { return {"maxValue", "hasMax", "negativeSlope", "threshold"}; }
  static BoundedLeakyReluParams read(const double* p) { return {float(p[0]), float(p[1]), float(p[2]), float(p[3])}; }
};
struct BoundedLeakyReluOp {
  static constexpr const char* kName = "BoundedLeakyRelu";
  static constexpr ir::Cycles kCyclesPerVector = c::kBoundedLeakyReluCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kBoundedLeakyReluHalfCyclesPerVector;
  using Params = BoundedLeakyReluParams;
  static float apply(float x, const Params& p) {
    if (x > p.threshold) return p.hasMax != 0.0f ? std::min(x, p.max) : x;
    return p.slope * (x - p.threshold);
  }
};
struct EluOp {
  static constexpr const char* kName = "Elu";
  static constexpr ir::Cycles kCyclesPerVector = c::kEluCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kEluHalfCyclesPerVector;
  struct Params {
    float alpha;
    static std::vector<std::string> names() { return {"alpha"}; }
    static Params read(const double* p) { return {float(p[0])}; }
  };
  static float apply(float x, const Params& p) { return x > 0.0f ? x : p.alpha * std::expm1(x); }
};
struct SeluOp {
  static constexpr const char* kName = "Selu";
  static constexpr ir::Cycles kCyclesPerVector = c::kEluCyclesPerVector + c::kArithCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kEluHalfCyclesPerVector + c::kArithCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, const Params&) { return kSeluScale * (x > 0.0f ? x : kSeluAlpha * std::expm1(x)); }
};
struct SoftplusOp {
  static constexpr const char* kName = "Softplus";
  static constexpr ir::Cycles kCyclesPerVector = c::kSoftplusCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kSoftplusHalfCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, const Params&) { return softplusOf(x); }
};
struct SoftsignOp {
  static constexpr const char* kName = "Softsign";
  static constexpr ir::Cycles kCyclesPerVector = c::kSoftsignCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kSoftsignHalfCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, const Params&) { return x / (std::fabs(x) + 1.0f); }
};
struct HardSigmoidOp {
  static constexpr const char* kName = "HardSigmoid";
  static constexpr ir::Cycles kCyclesPerVector = c::kHardSigmoidCyclesPerVector;
  struct Params {
    float slope;
    static std::vector<std::string> names() { return {"slope"}; }
    static Params read(const double* p) { return {float(p[0])}; }
  };
  static float apply(float x, const Params& p) { return std::min(std::max(p.slope * x + 0.5f, 0.0f), 1.0f); }
};
struct HardSiluOp {
  static constexpr const char* kName = "HardSilu";
  static constexpr ir::Cycles kCyclesPerVector = c::kHardSiluCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, const Params&) { return x * (std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f); }
};
struct MishOp {
  static constexpr const char* kName = "Mish";
  static constexpr ir::Cycles kCyclesPerVector = c::kMishCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kMishHalfCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, const Params&) { return x * std::tanh(softplusOf(x)); }
};
// popnn's own vertices: their NonLinearity2D estimate.
struct SwishOp {
  static constexpr const char* kName = "Swish";
  using Params = NoParams;
  static float apply(float x, const Params&) { return x * sigmoidOf(x); }
  static ir::Cycles cycles(std::uint64_t n, const Target& t, ir::DType type) {
    return type == ir::DType::Half ? c::nonLinearity2DCycles(n, type, c::kSwishHalfOpCycles, c::kSwishHalfVectorCycles, t)
                                   : c::nonLinearity2DCycles(n, type, c::kSwishOpCycles, c::kSwishVectorCycles, t);
  }
};
struct GeluTanhOp {
  static constexpr const char* kName = "GeluTanh";
  using Params = NoParams;
  static float apply(float x, const Params&) {
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
  }
  static ir::Cycles cycles(std::uint64_t n, const Target& t, ir::DType type) {
    const ir::Cycles op = type == ir::DType::Half ? c::kGeluTanhHalfOpCycles : c::kGeluTanhOpCycles;
    return c::nonLinearity2DCycles(n, type, op, op, t);
  }
};

// ---- gradients: apply(reads, grad) ----

struct ClippedReluGradOp {
  static constexpr const char* kName = "ClippedReluGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kClippedReluGradCyclesPerVector;
  using Params = ClippedReluOp::Params;
  static float apply(float y, float g, const Params& p) { return y > 0.0f && y < p.max ? g : 0.0f; }
};
struct LeakyReluGradOp {
  static constexpr const char* kName = "LeakyReluGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kLeakyReluGradCyclesPerVector;
  using Params = LeakyReluOp::Params;
  static float apply(float y, float g, const Params& p) { return y > 0.0f ? g : p.slope * g; }
};
struct BoundedLeakyReluGradOp {
  static constexpr const char* kName = "BoundedLeakyReluGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kBoundedLeakyReluGradCyclesPerVector;
  using Params = BoundedLeakyReluParams;
  static float apply(float y, float g, const Params& p) {
    if (y > 0.0f) return p.hasMax != 0.0f && y >= p.max ? 0.0f : g;
    return p.slope * g;
  }
};
struct EluGradOp {
  static constexpr const char* kName = "EluGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kEluGradCyclesPerVector;
  using Params = EluOp::Params;
  static float apply(float y, float g, const Params& p) { return y > 0.0f ? g : g * (y + p.alpha); }
};
struct SeluGradOp {
  static constexpr const char* kName = "SeluGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kSeluGradCyclesPerVector;
  using Params = NoParams;
  static float apply(float y, float g, const Params&) {
    return y > 0.0f ? g * kSeluScale : g * (y + kSeluScale * kSeluAlpha);
  }
};
struct SoftplusGradOp {
  static constexpr const char* kName = "SoftplusGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kSoftplusGradCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kSoftplusGradHalfCyclesPerVector;
  using Params = NoParams;
  static float apply(float y, float g, const Params&) { return g * -std::expm1(-y); }
};
struct SoftsignGradOp {
  static constexpr const char* kName = "SoftsignGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kSoftsignGradCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kSoftsignGradHalfCyclesPerVector;
  using Params = NoParams;
  static float apply(float y, float g, const Params&) {
    const float d = 1.0f - std::fabs(y);
    return g * (d * d);
  }
};
struct HardSigmoidGradOp {
  static constexpr const char* kName = "HardSigmoidGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kHardSigmoidGradCyclesPerVector;
  using Params = HardSigmoidOp::Params;
  static float apply(float y, float g, const Params& p) { return y > 0.0f && y < 1.0f ? p.slope * g : 0.0f; }
};
struct HardSiluGradOp {
  static constexpr const char* kName = "HardSiluGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kHardSiluGradCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, float g, const Params&) {
    if (x <= -3.0f) return 0.0f;
    if (x >= 3.0f) return g;
    return g * ((2.0f * x + 3.0f) / 6.0f);
  }
};
struct MishGradOp {
  static constexpr const char* kName = "MishGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kMishGradCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kMishGradHalfCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, float g, const Params&) {
    const float t = std::tanh(softplusOf(x));
    return g * (t + x * sigmoidOf(x) * (1.0f - t * t));
  }
};
struct SwishGradOp {
  static constexpr const char* kName = "SwishGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kSwishGradCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kSwishGradHalfCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, float g, const Params&) {
    const float s = sigmoidOf(x);
    return g * (s * (1.0f + x * (1.0f - s)));
  }
};
struct GeluTanhGradOp {
  static constexpr const char* kName = "GeluTanhGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kGeluTanhGradCyclesPerVector;
  static constexpr ir::Cycles kHalfCyclesPerVector = c::kGeluTanhGradHalfCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, float g, const Params&) {
    const float t = std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
    const float inner = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
    return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * inner);
  }
};
struct PReluAlphaGradOp {
  static constexpr const char* kName = "PReluAlphaGrad";
  static constexpr ir::Cycles kCyclesPerVector = c::kPReluAlphaGradCyclesPerVector;
  using Params = NoParams;
  static float apply(float x, float g, const Params&) { return x < 0.0f ? x * g : 0.0f; }
};

// ---- the codelets ----

template <class Op, class = void>
struct HasOwnCycles : std::false_type {};
template <class Op>
struct HasOwnCycles<Op, std::void_t<decltype(&Op::cycles)>> : std::true_type {};

template <class Op>
IPUSIM_KERNEL void activationForward(const float* __restrict in, float* __restrict out, std::uint64_t n, typename Op::Params p) {
  vec::forEach(n, [=](std::uint64_t i) { out[i] = Op::apply(in[i], p); });
}

template <class Op>
class ActivationCodelet final : public FlatCodelet<ActivationCodelet<Op>> {
 public:
  explicit ActivationCodelet(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return Op::kName; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return Op::Params::names(); }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    if constexpr (HasOwnCycles<Op>::value) return Op::cycles(shape.fieldSizes[0], target, vectorType_);
    else
      return c::kUnaryOpVertexOverhead + c::vectors(shape.fieldSizes[0], target, vectorType_) * cyclesPerVector<Op>(vectorType_);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    activationForward<Op>(f[0].as<const float>(), f[1].as<float>(), f[1].size, Op::Params::read(params));
  }

 private:
  ir::DType vectorType_;
};

template <class Op>
IPUSIM_KERNEL void activationBackward(const float* __restrict reads, const float* __restrict gradIn, float* __restrict gradOut,
                            std::uint64_t n, typename Op::Params p) {
  vec::forEach(n, [=](std::uint64_t i) { gradOut[i] = Op::apply(reads[i], gradIn[i], p); });
}

template <class Op>
class ActivationGradCodelet final : public FlatCodelet<ActivationGradCodelet<Op>> {
 public:
  explicit ActivationGradCodelet(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return Op::kName; }
  std::vector<FieldSpec> fields() const override {
    return {{"activation", ir::DType::Float, FieldAccess::In},
            {"gradIn", ir::DType::Float, FieldAccess::In},
            {"gradOut", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return Op::Params::names(); }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("gradIn", "activation");
    check.expectSameSize("gradOut", "activation");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return c::kNonLinearityGradVertexOverhead +
           c::vectors(shape.fieldSizes[0], target, vectorType_) * cyclesPerVector<Op>(vectorType_);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    activationBackward<Op>(f[0].as<const float>(), f[1].as<const float>(), f[2].as<float>(), f[2].size, Op::Params::read(params));
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addActivationCodelets(CodeletRegistry& registry) {
  addFloatAndHalf<ActivationCodelet<ClippedReluOp>>(registry);
  addFloatAndHalf<ActivationCodelet<LeakyReluOp>>(registry);
  addFloatAndHalf<ActivationCodelet<BoundedLeakyReluOp>>(registry);
  addFloatAndHalf<ActivationCodelet<EluOp>>(registry);
  addFloatAndHalf<ActivationCodelet<SeluOp>>(registry);
  addFloatAndHalf<ActivationCodelet<SoftplusOp>>(registry);
  addFloatAndHalf<ActivationCodelet<SoftsignOp>>(registry);
  addFloatAndHalf<ActivationCodelet<HardSigmoidOp>>(registry);
  addFloatAndHalf<ActivationCodelet<HardSiluOp>>(registry);
  addFloatAndHalf<ActivationCodelet<MishOp>>(registry);
  addFloatAndHalf<ActivationCodelet<SwishOp>>(registry);
  addFloatAndHalf<ActivationCodelet<GeluTanhOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<ClippedReluGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<LeakyReluGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<BoundedLeakyReluGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<EluGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<SeluGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<SoftplusGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<SoftsignGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<HardSigmoidGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<HardSiluGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<MishGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<SwishGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<GeluTanhGradOp>>(registry);
  addFloatAndHalf<ActivationGradCodelet<PReluAlphaGradOp>>(registry);
}

}  // namespace ipusim::model
