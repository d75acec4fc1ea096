// The optimizers' in-place weight updates, Keras 3's rules (keras.optimizers;
// the scheduler's optimizer_updates.hpp lists them):
//   GradientDescentUpdate                data, grad; learningRate
//   MomentumUpdate                       data, grad, velocity; learningRate, momentum, nesterov
//   AdamUpdate                           data, grad, m, v, step (int, 1); learningRate, beta1, beta2, epsilon
//   RmspropUpdate[Centered][Momentum]    data, grad, velocity[, average][, moment]; learningRate, rho, epsilon[, momentum]
//   AdagradUpdate                        data, grad, accumulator; learningRate, epsilon
//   AdamaxUpdate                         data, grad, m, u, step; learningRate, beta1, beta2, epsilon
//   NadamUpdate                          data, grad, m, v, step, uProduct (float, 1); learningRate, beta1, beta2, epsilon
// Each takes *weightDecay* (default 0; Keras's decoupled weight decay, applied
// first: data -= data * weightDecay * learningRate). A `...Scheduled` variant
// (MomentumUpdateScheduled, AdamUpdateScheduled, ...) reads the learning
// rate from a last field `learningRate` (float, 1: the tile's copy of the
// step's scheduled rate) instead of the param.
// Every other float field is `data`-sized; the half variants (<half>) have
// those half (computed in float, rounded once per store; HalfCodelet), the
// per-tile scalars (learningRate, uProduct) float.
// The bias corrections read the step count t (the tile's copy, 1 on the
// first step): Adam's alpha = learningRate * sqrt(1 - beta2^t) / (1 - beta1^t);
// Adamax's 1 - beta1^t; Nadam's u_t = beta1 (1 - 0.5 * 0.96^t),
// u_t1 = beta1 (1 - 0.5 * 0.96^(t+1)), 1 - beta2^t, with uProduct the product
// u_1 ... u_t (NadamMomentumProduct). Scalars in float, as Keras computes
// them in the variables' dtype (Adam's alpha in double, as before).
// Timing, estimate: PopLibs has no optimizer vertex (TensorFlow's IPU
// backend builds these updates from popops expressions); each is costed as
// one fused popops vertex: the ScaledAdd2D frame (kScaledAddVertexOverhead),
// then per 64-bit vector the sum of its operations' popops costs (cycle_model:
// ScaledAdd 3, Square 2, Add/Sub/Mul 3, Abs 2, Max 3 / 4 half, Sqrt 10 / 23
// half, Divide 10 / 21 half), and its scalar work once per vertex (a power as
// exp(t log beta), a reciprocal; a load of the scheduled rate). Weight decay
// adds one axpby per vector (a ScaledAdd) and its scalar product.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::model {
namespace {

enum class Rule { Momentum, Adam, Rmsprop, GradientDescent, Adagrad, Adamax, Nadam };

struct RuleShape {
  Rule rule;
  bool centered = false, momentum = false;  // RMSprop variants
  bool scheduled = false;                   // the learning rate read from a field
  std::string name() const {
    std::string n;
    switch (rule) {
      case Rule::Momentum: n = "MomentumUpdate"; break;
      case Rule::Adam: n = "AdamUpdate"; break;
      case Rule::Rmsprop: n = std::string("RmspropUpdate") + (centered ? "Centered" : "") + (momentum ? "Momentum" : ""); break;
      case Rule::GradientDescent: n = "GradientDescentUpdate"; break;
      case Rule::Adagrad: n = "AdagradUpdate"; break;
      case Rule::Adamax: n = "AdamaxUpdate"; break;
      case Rule::Nadam: n = "NadamUpdate"; break;
    }
    return scheduled ? n + "Scheduled" : n;
  }
  std::vector<std::string> slots() const {
    switch (rule) {
      case Rule::Momentum: return {"velocity"};
      case Rule::Adam: case Rule::Nadam: return {"m", "v"};
      case Rule::Adamax: return {"m", "u"};
      case Rule::Adagrad: return {"accumulator"};
      case Rule::GradientDescent: return {};
      case Rule::Rmsprop: {
        std::vector<std::string> s{"velocity"};
        if (centered) s.push_back("average");
        if (momentum) s.push_back("moment");
        return s;
      }
    }
    return {};
  }
  bool readsStep() const { return rule == Rule::Adam || rule == Rule::Adamax || rule == Rule::Nadam; }
  // The rule's own params, after learningRate (unless scheduled) and before weightDecay.
  std::vector<std::string> ruleParams() const {
    switch (rule) {
      case Rule::Momentum: return {"momentum", "nesterov"};
      case Rule::Adam: case Rule::Adamax: case Rule::Nadam: return {"beta1", "beta2", "epsilon"};
      case Rule::Rmsprop: return momentum ? std::vector<std::string>{"rho", "epsilon", "momentum"}
                                          : std::vector<std::string>{"rho", "epsilon"};
      case Rule::Adagrad: return {"epsilon"};
      case Rule::GradientDescent: return {};
    }
    return {};
  }
};

class OptimizerUpdate final : public Codelet {
 public:
  OptimizerUpdate(RuleShape shape, ir::DType vectorType = ir::DType::Float) : r_(shape), vectorType_(vectorType) {
    const auto slots = r_.slots();
    stepField_ = 2 + slots.size();
    productField_ = stepField_ + (r_.readsStep() ? 1 : 0);
    rateField_ = productField_ + (r_.rule == Rule::Nadam ? 1 : 0);
    ruleParam_ = r_.scheduled ? 0 : 1;
    decayParam_ = ruleParam_ + r_.ruleParams().size();
  }
  std::string name() const override { return r_.name(); }
  std::vector<FieldSpec> fields() const override {
    std::vector<FieldSpec> f{{"data", ir::DType::Float, FieldAccess::InOut}, {"grad", ir::DType::Float, FieldAccess::In}};
    for (const auto& s : r_.slots()) f.push_back({s, ir::DType::Float, FieldAccess::InOut});
    if (r_.readsStep()) f.push_back({"step", ir::DType::Int, FieldAccess::In});
    if (r_.rule == Rule::Nadam) f.push_back({"uProduct", ir::DType::Float, FieldAccess::In});
    if (r_.scheduled) f.push_back({"learningRate", ir::DType::Float, FieldAccess::In});
    return f;
  }
  std::vector<std::string> params() const override {
    std::vector<std::string> p;
    if (!r_.scheduled) p.push_back("learningRate");
    for (const auto& n : r_.ruleParams()) p.push_back(n);
    p.push_back("weightDecay");
    return p;
  }
  std::vector<ParamDefault> paramDefaults() const override { return {{"weightDecay", 0}}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("grad", "data");
    for (const auto& s : r_.slots()) check.expectSameSize(s, "data");
    if (r_.readsStep()) check.expectSize("step", 1, "the step count");
    if (r_.rule == Rule::Nadam) check.expectSize("uProduct", 1, "the momentum product");
    if (r_.scheduled) check.expectSize("learningRate", 1, "the step's learning rate");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    namespace c = cycles;
    const bool half = vectorType_ == ir::DType::Half;
    const ir::Cycles sqrt = half ? c::kSqrtHalfCyclesPerVector : c::kSqrtCyclesPerVector;
    const ir::Cycles divide = half ? c::kDivideHalfCyclesPerVector : c::kDivideCyclesPerVector;
    const ir::Cycles max = half ? c::kMinMaxHalfCyclesPerVector : c::kMinMaxCyclesPerVector;
    const ir::Cycles abs = half ? c::kAbsHalfCyclesPerVector : c::kAbsCyclesPerVector;
    const ir::Cycles power = c::kScalarLogCycles + 1 + c::kExpCyclesPerVector;  // beta^t = exp(t log beta)
    ir::Cycles perVector = 0, scalar = 0;
    switch (r_.rule) {
      case Rule::GradientDescent:  // w -= lr g
        perVector = c::kScaledAddCyclesPerVector;
        break;
      case Rule::Momentum:  // v = m v - lr g; w += v (nesterov: w += m v - lr g)
        perVector = 2 * c::kScaledAddCyclesPerVector;
        break;
      case Rule::Adam:  // m, g^2, v, sqrt, + eps, divide, w -= alpha (.)
        perVector = c::kScaledAddCyclesPerVector + c::kSquareCyclesPerVector + c::kScaledAddCyclesPerVector + sqrt +
                    c::kAddSubMulCyclesPerVector + divide + c::kScaledAddCyclesPerVector;
        // alpha: two powers as exp(t log beta), a square root, a reciprocal.
        scalar = 2 * power + c::kSqrtCyclesPerVector + c::kScalarReciprocalCycles;
        break;
      case Rule::Rmsprop:  // g^2, v, [a, a^2, v - a^2], + eps, sqrt, divide, [moment], w -= lr (.)
        perVector = c::kSquareCyclesPerVector + c::kScaledAddCyclesPerVector + c::kAddSubMulCyclesPerVector + sqrt +
                    divide + c::kScaledAddCyclesPerVector;
        if (r_.centered) perVector += c::kScaledAddCyclesPerVector + c::kSquareCyclesPerVector + c::kAddSubMulCyclesPerVector;
        if (r_.momentum) perVector += c::kScaledAddCyclesPerVector;
        break;
      case Rule::Adagrad:  // g^2, acc +=, + eps, sqrt, divide, w -= lr (.)
        perVector = c::kSquareCyclesPerVector + 2 * c::kAddSubMulCyclesPerVector + sqrt + divide +
                    c::kScaledAddCyclesPerVector;
        break;
      case Rule::Adamax:  // m, |g|, beta2 u, max, + eps, divide, w -= (lr / (1 - beta1^t)) (.)
        perVector = c::kScaledAddCyclesPerVector + abs + c::kAddSubMulCyclesPerVector + max +
                    c::kAddSubMulCyclesPerVector + divide + c::kScaledAddCyclesPerVector;
        scalar = power + c::kScalarReciprocalCycles;
        break;
      case Rule::Nadam:  // m, g^2, v, v / (1 - beta2^t), sqrt, + eps, m_hat (a product, an axpy), divide, w -= lr (.)
        perVector = c::kScaledAddCyclesPerVector + c::kSquareCyclesPerVector + c::kScaledAddCyclesPerVector +
                    c::kAddSubMulCyclesPerVector + sqrt + c::kAddSubMulCyclesPerVector + c::kAddSubMulCyclesPerVector +
                    c::kScaledAddCyclesPerVector + divide + c::kScaledAddCyclesPerVector;
        // 0.96^t, 0.96^(t+1), beta2^t; the reciprocals of 1 - P_t, 1 - P_t1 and 1 - beta2^t.
        scalar = 3 * power + 3 * c::kScalarReciprocalCycles;
        break;
    }
    // (Nesterov's extra axpby is not charged: cycles() sees the shape, not the params.)
    if (shape.params[decayParam_] != 0) perVector += c::kScaledAddCyclesPerVector, scalar += 1;  // w -= (wd lr) w
    if (r_.scheduled) scalar += 1;  // the rate's load
    return c::kScaledAddVertexOverhead + scalar + c::vectors(shape.fieldSizes[0], target, vectorType_) * perVector;
  }
  void compute(const std::vector<FieldData>& fields, const std::vector<double>& params) const override {
    computeOne(fields.data(), params.data());
  }
  void computeBatch(const FieldData* fields, std::size_t numFields, const double* params, std::size_t numParams,
                    std::size_t count) const override {
    for (std::size_t i = 0; i < count; ++i) computeOne(fields + i * numFields, params + i * numParams);
  }

 private:
  void computeOne(const FieldData* f, const double* params) const {
    float* w = f[0].as<float>();
    const float* g = f[1].as<const float>();
    const std::uint64_t n = f[0].size;
    const double lrParam = r_.scheduled ? double(*f[rateField_].as<const float>()) : params[0];
    const float lr = float(lrParam);
    const double* p = params + ruleParam_;  // the rule's own params
    const float decay = float(params[decayParam_]);
    if (decay != 0)  // Keras's _apply_weight_decay: variable - variable * wd * lr
      for (std::uint64_t i = 0; i < n; ++i) w[i] = w[i] - w[i] * decay * lr;
    const double t = r_.readsStep() ? double(*f[stepField_].as<const std::int32_t>()) : 0;
    switch (r_.rule) {
      case Rule::GradientDescent:
        for (std::uint64_t i = 0; i < n; ++i) w[i] -= g[i] * lr;
        break;
      case Rule::Momentum: {
        float* v = f[2].as<float>();
        const float momentum = float(p[0]);
        const bool nesterov = p[1] != 0;
        for (std::uint64_t i = 0; i < n; ++i) {
          v[i] = momentum * v[i] - lr * g[i];
          w[i] += nesterov ? momentum * v[i] - lr * g[i] : v[i];
        }
        break;
      }
      case Rule::Adam: {
        float* m = f[2].as<float>();
        float* v = f[3].as<float>();
        const double beta1 = p[0], beta2 = p[1];
        const float epsilon = float(p[2]);
        const float alpha = float(lrParam * std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t)));
        const float oneMinusBeta1 = float(1.0 - beta1), oneMinusBeta2 = float(1.0 - beta2);
        for (std::uint64_t i = 0; i < n; ++i) {
          m[i] += (g[i] - m[i]) * oneMinusBeta1;
          v[i] += (g[i] * g[i] - v[i]) * oneMinusBeta2;
          w[i] -= alpha * m[i] / (std::sqrt(v[i]) + epsilon);
        }
        break;
      }
      case Rule::Rmsprop: {
        float* v = f[2].as<float>();
        float* a = r_.centered ? f[3].as<float>() : nullptr;
        float* mom = r_.momentum ? f[r_.centered ? 4 : 3].as<float>() : nullptr;
        const float rho = float(p[0]), epsilon = float(p[1]), momentum = r_.momentum ? float(p[2]) : 0.0f;
        const float oneMinusRho = 1.0f - rho;
        for (std::uint64_t i = 0; i < n; ++i) {
          v[i] = rho * v[i] + oneMinusRho * g[i] * g[i];
          float denominator = v[i] + epsilon;
          if (a) {
            a[i] = rho * a[i] + oneMinusRho * g[i];
            denominator = v[i] - a[i] * a[i] + epsilon;
          }
          const float increment = lr * g[i] / std::sqrt(denominator);
          if (mom) {
            mom[i] = momentum * mom[i] + increment;
            w[i] -= mom[i];
          } else {
            w[i] -= increment;
          }
        }
        break;
      }
      case Rule::Adagrad: {  // acc += g^2; w -= lr g / sqrt(acc + epsilon)
        float* acc = f[2].as<float>();
        const float epsilon = float(p[0]);
        for (std::uint64_t i = 0; i < n; ++i) {
          acc[i] += g[i] * g[i];
          w[i] -= lr * g[i] / std::sqrt(acc[i] + epsilon);
        }
        break;
      }
      case Rule::Adamax: {  // m += (g - m)(1 - beta1); u = max(beta2 u, |g|); w -= lr m / ((1 - beta1^t)(u + eps))
        float* m = f[2].as<float>();
        float* u = f[3].as<float>();
        const float beta1 = float(p[0]), beta2 = float(p[1]), epsilon = float(p[2]);
        const float oneMinusBeta1Power = 1.0f - std::pow(beta1, float(t));
        const float oneMinusBeta1 = float(1.0 - p[0]);
        for (std::uint64_t i = 0; i < n; ++i) {
          m[i] += (g[i] - m[i]) * oneMinusBeta1;
          u[i] = std::max(beta2 * u[i], std::fabs(g[i]));
          w[i] -= lr * m[i] / (oneMinusBeta1Power * (u[i] + epsilon));
        }
        break;
      }
      case Rule::Nadam: {
        float* m = f[2].as<float>();
        float* v = f[3].as<float>();
        const float product = *f[productField_].as<const float>();  // u_1 ... u_t
        const float beta1 = float(p[0]), beta2 = float(p[1]), epsilon = float(p[2]);
        const float uT = beta1 * (1.0f - 0.5f * std::pow(0.96f, float(t)));
        const float uT1 = beta1 * (1.0f - 0.5f * std::pow(0.96f, float(t + 1)));
        const float productT1 = product * uT1;
        const float oneMinusBeta2Power = 1.0f - std::pow(beta2, float(t));
        const float oneMinusBeta1 = float(1.0 - p[0]), oneMinusBeta2 = float(1.0 - p[1]);
        const float momentumScale = uT1 / (1.0f - productT1), gradientScale = (1.0f - uT) / (1.0f - product);
        for (std::uint64_t i = 0; i < n; ++i) {
          m[i] += (g[i] - m[i]) * oneMinusBeta1;
          v[i] += (g[i] * g[i] - v[i]) * oneMinusBeta2;
          const float mHat = momentumScale * m[i] + gradientScale * g[i];
          const float vHat = v[i] / oneMinusBeta2Power;
          w[i] -= mHat * lr / (std::sqrt(vHat) + epsilon);
        }
        break;
      }
    }
  }

  RuleShape r_;
  ir::DType vectorType_;
  std::size_t stepField_ = 0, productField_ = 0, rateField_ = 0;  // field indices (when present)
  std::size_t ruleParam_ = 0, decayParam_ = 0;                     // param indices
};

void addWithHalf(CodeletRegistry& registry, RuleShape shape) {
  for (bool scheduled : {false, true}) {
    shape.scheduled = scheduled;
    registry.add(std::make_unique<OptimizerUpdate>(shape));
    auto half = std::make_unique<OptimizerUpdate>(shape, ir::DType::Half);
    std::vector<ir::DType> types;
    for (const FieldSpec& f : half->fields()) {
      const bool perTileScalar = f.name == "learningRate" || f.name == "uProduct";
      types.push_back(f.dtype == ir::DType::Float && !perTileScalar ? ir::DType::Half : f.dtype);
    }
    registry.add(std::make_unique<HalfCodelet>(typedCodeletName(shape.name(), {ir::DType::Half}), std::move(half),
                                               std::move(types)));
  }
}

}  // namespace

void addOptimizerUpdateCodelets(CodeletRegistry& registry) {
  addWithHalf(registry, {Rule::Momentum});
  addWithHalf(registry, {Rule::Adam});
  for (bool centered : {false, true})
    for (bool momentum : {false, true}) addWithHalf(registry, {Rule::Rmsprop, centered, momentum});
  addWithHalf(registry, {Rule::GradientDescent});
  addWithHalf(registry, {Rule::Adagrad});
  addWithHalf(registry, {Rule::Adamax});
  addWithHalf(registry, {Rule::Nadam});
}

}  // namespace ipusim::model
