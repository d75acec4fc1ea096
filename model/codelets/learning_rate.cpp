// The step's optimizer scalars, one vertex per tile on its own copies (as
// the step counter's Increment):
//   LearningRate: step (In, int, 1: the step count t, 1 on the first step),
//     learningRate (Out, float, 1); params schedule (0 exponential, 1 cosine,
//     2 polynomial, 3 inverse time), initialLearningRate, decaySteps,
//     *decayRate*, *staircase*, *alpha*, *warmup* (0/1), *warmupTarget*,
//     *warmupSteps*, *endLearningRate* (0.0001), *power* (1), *cycle*.
//     Keras 3's schedule (keras/src/optimizers/schedules/learning_rate_schedule.py)
//     at Keras's iteration s = t - 1, in float as Keras computes it:
//       exponential:  init * rate^p,            p = s / decaySteps (floored with staircase)
//       inverse time: init / (1 + rate p)
//       polynomial:   (init - end) (1 - s' / d')^power + end, s' = min(s, decaySteps) and
//                     d' = decaySteps, or with cycle d' = decaySteps ceil(s / decaySteps) (1 at s = 0)
//       cosine:       s' = min(s, decaySteps [+ warmupSteps]); with warmup and s' < warmupSteps
//                     (target - init) s' / warmupSteps + init, else from = target (warmup) or init,
//                     from ((1 - alpha) 0.5 (1 + cos(pi (s' - warmupSteps) / decaySteps)) + alpha)
//   PiecewiseConstantLearningRate: step (In, int), boundaries (In, int, n),
//     values (In, float, n + 1), learningRate (Out): values[i], i the number
//     of boundaries below s (Keras: values[0] while s <= boundaries[0]).
//   NadamMomentumProduct: step (In, int), product (InOut, float, 1); param
//     beta1: product *= beta1 (1 - 0.5 * 0.96^t) (Keras's Nadam _u_product).
// Timing, estimate: PopLibs has no such vertex (TensorFlow's IPU backend
// computes a schedule with popops scalar expressions); the UnaryOp2D frame
// and the popops costs of the scalar operations (cycle_model.hpp: int to
// float, divide, power, floor / ceil, min, cos, compare and select).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::model {
namespace {

enum Schedule { kExponential = 0, kCosine = 1, kPolynomial = 2, kInverseTime = 3 };
constexpr double kPi = 3.14159265358979323846;

// Iteration s (t - 1) of the step count field as a float.
float iterationOf(const FieldData& step) { return float(*step.as<const std::int32_t>() - 1); }

class LearningRate final : public FlatCodelet<LearningRate> {
 public:
  std::string name() const override { return "LearningRate"; }
  std::vector<FieldSpec> fields() const override {
    return {{"step", ir::DType::Int, FieldAccess::In}, {"learningRate", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override {
    return {"schedule", "initialLearningRate", "decaySteps", "decayRate", "staircase", "alpha", "warmup",
            "warmupTarget", "warmupSteps", "endLearningRate", "power", "cycle"};
  }
  std::vector<ParamDefault> paramDefaults() const override {
    return {{"decayRate", 0}, {"staircase", 0}, {"alpha", 0}, {"warmup", 0}, {"warmupTarget", 0},
            {"warmupSteps", 0}, {"endLearningRate", 0.0001}, {"power", 1}, {"cycle", 0}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSize("step", 1, "the step count");
    check.expectSize("learningRate", 1, "the step's learning rate");
    const double schedule = check.param("schedule");
    if (!(schedule == kExponential || schedule == kCosine || schedule == kPolynomial || schedule == kInverseTime))
      throw std::invalid_argument("LearningRate: schedule " + std::to_string(schedule) + " is not 0, 1, 2 or 3");
    if (!(check.param("decaySteps") > 0)) throw std::invalid_argument("LearningRate: decaySteps must be positive");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target&) const override {
    namespace c = cycles;
    const auto& p = shape.params;
    ir::Cycles scalar = c::kIntToFloatCyclesPerElement + c::kScalarReciprocalCycles;  // s, s / decaySteps
    switch (int(p[0])) {
      case kExponential: scalar += (p[4] != 0 ? c::kScalarRoundCycles : 0) + c::kScalarPowerCycles + 1; break;
      case kInverseTime: scalar += (p[4] != 0 ? c::kScalarRoundCycles : 0) + 2 + c::kScalarReciprocalCycles; break;
      case kPolynomial: scalar += c::kScalarRoundCycles + 2 + c::kScalarPowerCycles + 2; break;
      default:  // cosine: min, (warmup: compare, select, its line), cos, the scaling
        scalar += c::kMinMaxCyclesPerVector + (p[6] != 0 ? c::kSelectCyclesPerVector + 3 + c::kScalarReciprocalCycles : 0) +
                  1 + c::kScalarCosCycles + 4;
        break;
    }
    return c::kUnaryOpVertexOverhead + scalar;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float s = iterationOf(f[0]);
    const float init = float(p[1]), decaySteps = float(p[2]), rate = float(p[3]);
    const bool staircase = p[4] != 0;
    float lr = 0;
    switch (int(p[0])) {
      case kExponential: {
        float q = s / decaySteps;
        if (staircase) q = std::floor(q);
        lr = init * std::pow(rate, q);
        break;
      }
      case kInverseTime: {
        float q = s / decaySteps;
        if (staircase) q = std::floor(q);
        lr = init / (1.0f + rate * q);
        break;
      }
      case kPolynomial: {
        const float end = float(p[9]), power = float(p[10]);
        float step = s, steps = decaySteps;
        if (p[11] != 0)
          steps = decaySteps * (step == 0 ? 1.0f : std::ceil(step / decaySteps));
        else
          step = std::min(step, steps);
        lr = (init - end) * std::pow(1.0f - step / steps, power) + end;
        break;
      }
      default: {  // cosine
        const float alpha = float(p[5]);
        const bool warmup = p[6] != 0;
        const float target = float(p[7]), warmupSteps = float(p[8]);
        auto decayed = [&](float step, float from) {
          const float fraction = step / decaySteps;
          const float cosine = 0.5f * (1.0f + std::cos(float(kPi) * fraction));
          return from * (float(1.0 - p[5]) * cosine + alpha);
        };
        if (!warmup) {
          lr = decayed(std::min(s, decaySteps), init);
        } else {
          const float step = std::min(s, decaySteps + warmupSteps);
          lr = step < warmupSteps ? (target - init) * (step / warmupSteps) + init : decayed(step - warmupSteps, target);
        }
        break;
      }
    }
    *f[1].as<float>() = lr;
  }
};

class PiecewiseConstantLearningRate final : public FlatCodelet<PiecewiseConstantLearningRate> {
 public:
  std::string name() const override { return "PiecewiseConstantLearningRate"; }
  std::vector<FieldSpec> fields() const override {
    return {{"step", ir::DType::Int, FieldAccess::In},
            {"boundaries", ir::DType::Int, FieldAccess::In},
            {"values", ir::DType::Float, FieldAccess::In},
            {"learningRate", ir::DType::Float, FieldAccess::Out}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSize("step", 1, "the step count");
    check.expectNonEmpty("boundaries");
    check.expectSize("values", check.size("boundaries") + 1, "one more than boundaries");
    check.expectSize("learningRate", 1, "the step's learning rate");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target&) const override {
    // Per boundary a compare and a select (the value of the piece the step is past).
    return cycles::kUnaryOpVertexOverhead + shape.fieldSizes[1] * cycles::kSelectCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double*) const {
    const std::int64_t s = std::int64_t(*f[0].as<const std::int32_t>()) - 1;
    const std::int32_t* boundaries = f[1].as<const std::int32_t>();
    std::uint64_t piece = 0;
    while (piece < f[1].size && s > boundaries[piece]) ++piece;
    *f[3].as<float>() = f[2].as<const float>()[piece];
  }
};

class NadamMomentumProduct final : public FlatCodelet<NadamMomentumProduct> {
 public:
  std::string name() const override { return "NadamMomentumProduct"; }
  std::vector<FieldSpec> fields() const override {
    return {{"step", ir::DType::Int, FieldAccess::In}, {"product", ir::DType::Float, FieldAccess::InOut}};
  }
  std::vector<std::string> params() const override { return {"beta1"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSize("step", 1, "the step count");
    check.expectSize("product", 1, "the momentum product");
  }
  ir::Cycles cycles(const VertexShape&, const Target&) const override {
    // int to float, 0.96^t, then a multiply, a subtract and two multiplies.
    return cycles::kUnaryOpVertexOverhead + cycles::kIntToFloatCyclesPerElement + cycles::kScalarPowerCycles + 4;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float t = float(*f[0].as<const std::int32_t>());
    float& product = *f[1].as<float>();
    product = product * float(p[0]) * (1.0f - 0.5f * std::pow(0.96f, t));
  }
};

}  // namespace

void addLearningRateCodelets(CodeletRegistry& registry) {
  registry.add(std::make_unique<LearningRate>());
  registry.add(std::make_unique<PiecewiseConstantLearningRate>());
  registry.add(std::make_unique<NadamMomentumProduct>());
}

}  // namespace ipusim::model
