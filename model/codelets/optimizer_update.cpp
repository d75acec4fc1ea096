// The optimizers' in-place weight updates, Keras's rules (keras.optimizers,
// Keras 3 formulas; the scheduler's optimizer_updates.hpp lists them):
//   MomentumUpdate                       data, grad, velocity; learningRate, momentum, nesterov
//   AdamUpdate                           data, grad, m, v, step (int, 1); learningRate, beta1, beta2, epsilon
//   RmspropUpdate[Centered][Momentum]    data, grad, velocity[, average][, moment]; learningRate, rho, epsilon[, momentum]
// Every float field is `data`-sized; the half variants (<half>) have every
// float field half (computed in float, rounded once per store; HalfCodelet).
// Adam's bias correction reads the step count t (the tile's copy, 1 on the
// first step): alpha = learningRate * sqrt(1 - beta2^t) / (1 - beta1^t).
// Timing, estimate: PopLibs has no optimizer vertex (TensorFlow's IPU
// backend builds these updates from popops expressions); each is costed as
// one fused popops vertex: the ScaledAdd2D frame (kScaledAddVertexOverhead),
// then per 64-bit vector the sum of its operations' popops costs (cycle_model:
// ScaledAdd 3, Square 2, Add/Sub/Mul 3, Sqrt 10 / 23 half, Divide 10 / 21
// half); Adam adds its scalar bias correction once per vertex.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"

#include <cmath>

namespace ipusim::model {
namespace {

enum class Rule { Momentum, Adam, Rmsprop };

struct RuleShape {
  Rule rule;
  bool centered = false, momentum = false;  // RMSprop variants
  std::string name() const {
    switch (rule) {
      case Rule::Momentum: return "MomentumUpdate";
      case Rule::Adam: return "AdamUpdate";
      default: return std::string("RmspropUpdate") + (centered ? "Centered" : "") + (momentum ? "Momentum" : "");
    }
  }
  std::vector<std::string> slots() const {
    switch (rule) {
      case Rule::Momentum: return {"velocity"};
      case Rule::Adam: return {"m", "v"};
      default: {
        std::vector<std::string> s{"velocity"};
        if (centered) s.push_back("average");
        if (momentum) s.push_back("moment");
        return s;
      }
    }
  }
  std::vector<std::string> params() const {
    switch (rule) {
      case Rule::Momentum: return {"learningRate", "momentum", "nesterov"};
      case Rule::Adam: return {"learningRate", "beta1", "beta2", "epsilon"};
      default: {
        std::vector<std::string> p{"learningRate", "rho", "epsilon"};
        if (momentum) p.push_back("momentum");
        return p;
      }
    }
  }
};

class OptimizerUpdate final : public Codelet {
 public:
  OptimizerUpdate(RuleShape shape, ir::DType vectorType = ir::DType::Float) : r_(shape), vectorType_(vectorType) {}
  std::string name() const override { return r_.name(); }
  std::vector<FieldSpec> fields() const override {
    std::vector<FieldSpec> f{{"data", ir::DType::Float, FieldAccess::InOut}, {"grad", ir::DType::Float, FieldAccess::In}};
    for (const auto& s : r_.slots()) f.push_back({s, ir::DType::Float, FieldAccess::InOut});
    if (r_.rule == Rule::Adam) f.push_back({"step", ir::DType::Int, FieldAccess::In});
    return f;
  }
  std::vector<std::string> params() const override { return r_.params(); }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("grad", "data");
    for (const auto& s : r_.slots()) check.expectSameSize(s, "data");
    if (r_.rule == Rule::Adam) check.expectSize("step", 1, "the step count");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    namespace c = cycles;
    const bool half = vectorType_ == ir::DType::Half;
    const ir::Cycles sqrt = half ? c::kSqrtHalfCyclesPerVector : c::kSqrtCyclesPerVector;
    const ir::Cycles divide = half ? c::kDivideHalfCyclesPerVector : c::kDivideCyclesPerVector;
    ir::Cycles perVector = 0, scalar = 0;
    switch (r_.rule) {
      case Rule::Momentum:  // v = m v - lr g; w += v (nesterov: w += m v - lr g)
        perVector = 2 * c::kScaledAddCyclesPerVector;
        break;
      case Rule::Adam:  // m, g^2, v, sqrt, + eps, divide, w -= alpha (.)
        perVector = c::kScaledAddCyclesPerVector + c::kSquareCyclesPerVector + c::kScaledAddCyclesPerVector + sqrt +
                    c::kAddSubMulCyclesPerVector + divide + c::kScaledAddCyclesPerVector;
        // alpha: two powers as exp(t log beta), a square root, a reciprocal.
        scalar = 2 * (c::kScalarLogCycles + 1 + c::kExpCyclesPerVector) + c::kSqrtCyclesPerVector + c::kScalarReciprocalCycles;
        break;
      case Rule::Rmsprop:  // g^2, v, [a, a^2, v - a^2], + eps, sqrt, divide, [moment], w -= lr (.)
        perVector = c::kSquareCyclesPerVector + c::kScaledAddCyclesPerVector + c::kAddSubMulCyclesPerVector + sqrt +
                    divide + c::kScaledAddCyclesPerVector;
        if (r_.centered) perVector += c::kScaledAddCyclesPerVector + c::kSquareCyclesPerVector + c::kAddSubMulCyclesPerVector;
        if (r_.momentum) perVector += c::kScaledAddCyclesPerVector;
        break;
    }
    // (Nesterov's extra axpby is not charged: cycles() sees the shape, not the params.)
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
  void computeOne(const FieldData* f, const double* p) const {
    float* w = f[0].as<float>();
    const float* g = f[1].as<const float>();
    const std::uint64_t n = f[0].size;
    const float lr = float(p[0]);
    if (r_.rule == Rule::Momentum) {
      float* v = f[2].as<float>();
      const float momentum = float(p[1]);
      const bool nesterov = p[2] != 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        v[i] = momentum * v[i] - lr * g[i];
        w[i] += nesterov ? momentum * v[i] - lr * g[i] : v[i];
      }
    } else if (r_.rule == Rule::Adam) {
      float* m = f[2].as<float>();
      float* v = f[3].as<float>();
      const double t = double(*f[4].as<const std::int32_t>());
      const double beta1 = p[1], beta2 = p[2];
      const float epsilon = float(p[3]);
      const float alpha = float(p[0] * std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t)));
      const float oneMinusBeta1 = float(1.0 - beta1), oneMinusBeta2 = float(1.0 - beta2);
      for (std::uint64_t i = 0; i < n; ++i) {
        m[i] += (g[i] - m[i]) * oneMinusBeta1;
        v[i] += (g[i] * g[i] - v[i]) * oneMinusBeta2;
        w[i] -= alpha * m[i] / (std::sqrt(v[i]) + epsilon);
      }
    } else {
      float* v = f[2].as<float>();
      float* a = r_.centered ? f[3].as<float>() : nullptr;
      float* mom = r_.momentum ? f[r_.centered ? 4 : 3].as<float>() : nullptr;
      const float rho = float(p[1]), epsilon = float(p[2]), momentum = r_.momentum ? float(p[3]) : 0.0f;
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
    }
  }

  RuleShape r_;
  ir::DType vectorType_;
};

void addWithHalf(CodeletRegistry& registry, RuleShape shape) {
  registry.add(std::make_unique<OptimizerUpdate>(shape));
  auto half = std::make_unique<OptimizerUpdate>(shape, ir::DType::Half);
  std::vector<ir::DType> types;
  for (const FieldSpec& f : half->fields()) types.push_back(f.dtype == ir::DType::Float ? ir::DType::Half : f.dtype);
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName(shape.name(), {ir::DType::Half}), std::move(half),
                                             std::move(types)));
}

}  // namespace

void addOptimizerUpdateCodelets(CodeletRegistry& registry) {
  addWithHalf(registry, {Rule::Momentum});
  addWithHalf(registry, {Rule::Adam});
  for (bool centered : {false, true})
    for (bool momentum : {false, true}) addWithHalf(registry, {Rule::Rmsprop, centered, momentum});
}

}  // namespace ipusim::model
