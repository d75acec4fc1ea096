// The losses over dense targets (rows x cols floats: one-hot classes, binary
// labels or regression targets), their gradient and their accuracies:
//   SoftmaxCrossEntropyDense  logits, targets, probs (Out), loss (Out, rows)  loss[r] = -sum_c t log softmax(x)_c
//   SigmoidCrossEntropy       logits, targets, probs (Out), loss (Out, rows)  loss[r] = mean_c max(x,0) - x t + log(1 + exp(-|x|))
//   SquaredError              pred, targets, loss (Out, rows)                 loss[r] = mean_c (y - t)^2
//   AbsoluteError             pred, targets, loss (Out, rows)                 loss[r] = mean_c |y - t|
//   HuberError                pred, targets, loss (Out, rows)                 loss[r] = mean_c huber_delta(y - t)
//   KlDivergence              pred, targets, loss (Out, rows)                 loss[r] = sum_c t' log(t' / y'), t' and y'
//                                                                             clipped to [1e-7, 1] (Keras's kl_divergence)
//   TargetDifference          pred, targets, grad (Out)                       grad = scale (pred - t)
//   TargetSign                pred, targets, grad (Out)                       grad = scale sign(pred - t) (0 at 0)
//   TargetClip                pred, targets, grad (Out)                       grad = scale clip(pred - t, -delta, delta)
//   TargetKlDivergence        pred, targets, grad (Out)                       grad = scale (-t' / pred) where pred is in
//                                                                             [1e-7, 1], else 0 (TF's clip_by_value gradient)
//   CategoricalAccuracy       probs, targets, correct (Out, rows)             argmax p == argmax t (first of equal maxima)
//   BinaryAccuracy            probs, targets, correct (Out, rows)             mean_c ((p > 0.5) == (t > 0.5))
// huber_delta(e) = e^2 / 2 where |e| <= delta, else delta (|e| - delta / 2)
// (Keras's huber). Params: rows, cols (scale for the gradients; delta for
// HuberError and TargetClip). TargetDifference is
// the gradient of all three losses w.r.t. their logits or predictions:
// softmax (targets summing to 1, as one-hot targets do), sigmoid, and
// squared error (scale 2 / n). The cross-entropies work on logits, as TF's
// Keras does when the model's last softmax or sigmoid is fused into the loss.
// Half variants: the logits or predictions half (<half>), a gradient written
// in half from float probabilities (TargetDifference<float,half>).
// Timing: TargetDifference is popnn's LossSumSquaredTransform (its gradient
// is pred - target): getLossTransformCycles(isSoftmax = false) in
// lib/popnn/PerformanceEstimation.hpp, 5 + 5 + 5 + 2 + 1 + 1 overhead and 4
// cycles per float (per 2 halves); the forward losses and accuracies are
// estimates built from popops' per-vector costs (cycle_model.hpp) in the frame
// of SoftmaxCrossEntropy: a continuous-reduce row per fold over the columns.
// TargetSign and TargetClip (no popnn vertex: estimates) are
// TargetDifference's frame and cost plus, per element (per 2 halves), one
// compare-and-select (sign) or two (the clip's min and max), each costed as
// an add (kAddSubMulCyclesPerVector per vector). KlDivergence (estimate, in
// the frame of the forward losses): per vector two clamps, a divide, a log
// and a multiply; TargetKlDivergence (estimate: TargetDifference's frame)
// per element two compare-and-selects (the clip's range) and per vector a
// divide. Keras's epsilon: backend.epsilon(), 1e-7.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"

#include <cmath>

namespace ipusim::model {
namespace {

enum class Kind { SoftmaxDense, Sigmoid, Squared, Absolute, Huber, KlDivergence, Difference, Sign, Clip, KlGrad,
                  CategoricalAccuracy, BinaryAccuracy };

bool isGradient(Kind k) { return k == Kind::Difference || k == Kind::Sign || k == Kind::Clip || k == Kind::KlGrad; }

constexpr float kKerasEpsilon = 1e-7f;  // keras.backend.epsilon()

const char* nameOf(Kind k) {
  switch (k) {
    case Kind::SoftmaxDense: return "SoftmaxCrossEntropyDense";
    case Kind::Sigmoid: return "SigmoidCrossEntropy";
    case Kind::Squared: return "SquaredError";
    case Kind::Absolute: return "AbsoluteError";
    case Kind::Huber: return "HuberError";
    case Kind::KlDivergence: return "KlDivergence";
    case Kind::KlGrad: return "TargetKlDivergence";
    case Kind::Difference: return "TargetDifference";
    case Kind::Sign: return "TargetSign";
    case Kind::Clip: return "TargetClip";
    case Kind::CategoricalAccuracy: return "CategoricalAccuracy";
    default: return "BinaryAccuracy";
  }
}

class TargetLoss final : public FlatCodelet<TargetLoss> {
 public:
  explicit TargetLoss(Kind kind, ir::DType vectorType = ir::DType::Float) : kind_(kind), vectorType_(vectorType) {}
  std::string name() const override { return nameOf(kind_); }
  std::vector<FieldSpec> fields() const override {
    const bool probs = kind_ == Kind::SoftmaxDense || kind_ == Kind::Sigmoid;
    const bool accuracy = kind_ == Kind::CategoricalAccuracy || kind_ == Kind::BinaryAccuracy;
    std::vector<FieldSpec> f{{accuracy ? "probs" : "pred", ir::DType::Float, FieldAccess::In},
                             {"targets", ir::DType::Float, FieldAccess::In}};
    if (probs) f[0].name = "logits", f.push_back({"probs", ir::DType::Float, FieldAccess::Out});
    if (isGradient(kind_)) f.push_back({"grad", ir::DType::Float, FieldAccess::Out});
    else if (kind_ == Kind::CategoricalAccuracy || kind_ == Kind::BinaryAccuracy) f.push_back({"correct", ir::DType::Float, FieldAccess::Out});
    else f.push_back({"loss", ir::DType::Float, FieldAccess::Out});
    return f;
  }
  std::vector<std::string> params() const override {
    if (kind_ == Kind::Clip) return {"rows", "cols", "scale", "delta"};
    if (isGradient(kind_)) return {"rows", "cols", "scale"};
    if (kind_ == Kind::Huber) return {"rows", "cols", "delta"};
    return {"rows", "cols"};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows"), cols = check.dimension("cols");
    const std::string matrix = "rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols);
    const auto f = fields();
    check.expectSize(f[0].name, rows * cols, matrix);
    check.expectSize("targets", rows * cols, matrix);
    const bool perRow = f.back().name == "loss" || f.back().name == "correct";
    check.expectSize(f.back().name, perRow ? rows : rows * cols, perRow ? "rows" : matrix);
    if (f.size() == 4) check.expectSize("probs", rows * cols, matrix);
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    namespace c = cycles;
    const auto rows = std::uint64_t(shape.params[0]), cols = std::uint64_t(shape.params[1]);
    if (isGradient(kind_)) {
      const bool half = vectorType_ == ir::DType::Half;
      const std::uint64_t n = rows * cols;
      const std::uint64_t selects = kind_ == Kind::Sign ? 1 : kind_ == Kind::Clip || kind_ == Kind::KlGrad ? 2 : 0;
      const ir::Cycles divides = kind_ == Kind::KlGrad ? c::vectors(n, target, vectorType_) * c::kDivideCyclesPerVector : 0;
      return c::kLossTransformSumSquaredOverhead + (half ? 1 + 2 + (n % 2 ? 6 : 0) : 0) + divides +
             (c::kLossTransformSumSquaredCyclesPerElement + selects * c::kAddSubMulCyclesPerVector) * (half ? n / 2 : n);
    }
    const ir::Cycles vectors = c::vectors(cols, target, vectorType_);
    const ir::Cycles fold = c::kContinuousReduceRowOverhead + vectors;
    ir::Cycles perRow = 0;
    switch (kind_) {
      case Kind::SoftmaxDense:  // max, sum, x - max, exp, / sum; t . (lse - x)
        perRow = 3 * fold + vectors * (3 * c::kAddSubMulCyclesPerVector + c::kExpCyclesPerVector) +
                 c::kScalarReciprocalCycles + c::kScalarLogCycles;
        break;
      case Kind::Sigmoid:  // sigmoid; max(x,0) - x t + log(1 + exp(-|x|)); the mean
        perRow = fold + vectors * (c::kSigmoidCyclesPerVector + 4 * c::kAddSubMulCyclesPerVector +
                                   c::kExpCyclesPerVector + c::kLogCyclesPerVector);
        break;
      case Kind::Squared: perRow = fold + vectors * (c::kAddSubMulCyclesPerVector + c::kSquareCyclesPerVector); break;
      case Kind::Absolute: perRow = fold + vectors * (c::kAddSubMulCyclesPerVector + c::kAbsCyclesPerVector); break;
      case Kind::Huber:  // e, |e|, e^2 / 2, delta (|e| - delta / 2), the select
        perRow = fold + vectors * (4 * c::kAddSubMulCyclesPerVector + c::kAbsCyclesPerVector + c::kSquareCyclesPerVector);
        break;
      case Kind::KlDivergence:  // clip t and y, t / y, log, times t
        perRow = fold + vectors * (2 * c::kClampCyclesPerVector + c::kDivideCyclesPerVector + c::kLogCyclesPerVector +
                                   c::kAddSubMulCyclesPerVector);
        break;
      case Kind::CategoricalAccuracy: perRow = 2 * fold + c::kAddSubMulCyclesPerVector; break;
      default: perRow = fold + vectors * 2 * c::kAddSubMulCyclesPerVector; break;
    }
    return c::kContinuousReduceOverhead + rows * perRow;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const auto rows = std::uint64_t(p[0]), cols = std::uint64_t(p[1]);
    const float* x = f[0].as<const float>();
    const float* t = f[1].as<const float>();
    for (std::uint64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * cols;
      const float* tr = t + r * cols;
      switch (kind_) {
        case Kind::SoftmaxDense: {
          float* pr = f[2].as<float>() + r * cols;
          float mx = xr[0];
          for (std::uint64_t c = 1; c < cols; ++c) mx = std::max(mx, xr[c]);
          double sum = 0;
          for (std::uint64_t c = 0; c < cols; ++c) sum += pr[c] = std::exp(xr[c] - mx);
          const float lse = std::log(float(sum));
          double loss = 0;
          for (std::uint64_t c = 0; c < cols; ++c) {
            pr[c] = float(pr[c] / sum);
            loss += double(tr[c]) * (lse - (xr[c] - mx));
          }
          f[3].as<float>()[r] = float(loss);
          break;
        }
        case Kind::Sigmoid: {
          float* pr = f[2].as<float>() + r * cols;
          double loss = 0;
          for (std::uint64_t c = 0; c < cols; ++c) {
            const float z = xr[c];
            pr[c] = 1.0f / (1.0f + std::exp(-z));
            loss += std::max(z, 0.0f) - z * tr[c] + std::log1p(std::exp(-std::fabs(z)));
          }
          f[3].as<float>()[r] = float(loss / double(cols));
          break;
        }
        case Kind::Squared: {
          double loss = 0;
          for (std::uint64_t c = 0; c < cols; ++c) loss += double(xr[c] - tr[c]) * double(xr[c] - tr[c]);
          f[2].as<float>()[r] = float(loss / double(cols));
          break;
        }
        case Kind::Absolute: {
          double loss = 0;
          for (std::uint64_t c = 0; c < cols; ++c) loss += std::fabs(double(xr[c] - tr[c]));
          f[2].as<float>()[r] = float(loss / double(cols));
          break;
        }
        case Kind::Huber: {
          const double delta = p[2];
          double loss = 0;
          for (std::uint64_t c = 0; c < cols; ++c) {
            const double e = double(xr[c] - tr[c]), a = std::fabs(e);
            loss += a <= delta ? 0.5 * e * e : delta * a - 0.5 * delta * delta;
          }
          f[2].as<float>()[r] = float(loss / double(cols));
          break;
        }
        case Kind::KlDivergence: {
          double loss = 0;
          for (std::uint64_t c = 0; c < cols; ++c) {
            const float t = std::min(std::max(tr[c], kKerasEpsilon), 1.0f);
            const float y = std::min(std::max(xr[c], kKerasEpsilon), 1.0f);
            loss += double(t * std::log(t / y));
          }
          f[2].as<float>()[r] = float(loss);
          break;
        }
        case Kind::KlGrad: {
          const float scale = float(p[2]);
          float* g = f[2].as<float>() + r * cols;
          for (std::uint64_t c = 0; c < cols; ++c) {
            const float t = std::min(std::max(tr[c], kKerasEpsilon), 1.0f);
            const float y = xr[c];
            g[c] = y >= kKerasEpsilon && y <= 1.0f ? scale * (-t / y) : 0.0f;
          }
          break;
        }
        case Kind::Difference:
        case Kind::Sign:
        case Kind::Clip: {
          const float scale = float(p[2]);
          float* g = f[2].as<float>() + r * cols;
          for (std::uint64_t c = 0; c < cols; ++c) {
            const float e = xr[c] - tr[c];
            const float d = kind_ == Kind::Difference ? e
                            : kind_ == Kind::Sign     ? float((e > 0) - (e < 0))
                                                      : std::min(std::max(e, -float(p[3])), float(p[3]));
            g[c] = scale * d;
          }
          break;
        }
        case Kind::CategoricalAccuracy: {
          std::uint64_t bp = 0, bt = 0;
          for (std::uint64_t c = 1; c < cols; ++c) {
            if (xr[c] > xr[bp]) bp = c;
            if (tr[c] > tr[bt]) bt = c;
          }
          f[2].as<float>()[r] = bp == bt ? 1.0f : 0.0f;
          break;
        }
        case Kind::BinaryAccuracy: {
          std::uint64_t same = 0;
          for (std::uint64_t c = 0; c < cols; ++c) same += (xr[c] > 0.5f) == (tr[c] > 0.5f);
          f[2].as<float>()[r] = float(double(same) / double(cols));
          break;
        }
      }
    }
  }

 private:
  Kind kind_;
  ir::DType vectorType_;
};

void addHalf(CodeletRegistry& registry, Kind kind, std::vector<ir::DType> types, const std::string& name) {
  registry.add(std::make_unique<HalfCodelet>(name, std::make_unique<TargetLoss>(kind, ir::DType::Half), std::move(types)));
}

}  // namespace

void addTargetLossCodelets(CodeletRegistry& registry) {
  constexpr auto H = ir::DType::Half, F = ir::DType::Float;
  for (Kind k : {Kind::SoftmaxDense, Kind::Sigmoid, Kind::Squared, Kind::Absolute, Kind::Huber, Kind::KlDivergence,
                 Kind::Difference, Kind::Sign, Kind::Clip, Kind::KlGrad, Kind::CategoricalAccuracy, Kind::BinaryAccuracy})
    registry.add(std::make_unique<TargetLoss>(k));
  addHalf(registry, Kind::SoftmaxDense, {H, F, F, F}, typedCodeletName(nameOf(Kind::SoftmaxDense), {H}));
  addHalf(registry, Kind::Sigmoid, {H, F, F, F}, typedCodeletName(nameOf(Kind::Sigmoid), {H}));
  addHalf(registry, Kind::Squared, {H, F, F}, typedCodeletName(nameOf(Kind::Squared), {H}));
  for (Kind k : {Kind::Absolute, Kind::Huber, Kind::KlDivergence})
    addHalf(registry, k, {H, F, F}, typedCodeletName(nameOf(k), {H}));
  for (Kind k : {Kind::Difference, Kind::Sign, Kind::Clip, Kind::KlGrad}) {
    addHalf(registry, k, {H, F, H}, typedCodeletName(nameOf(k), {H}));
    addHalf(registry, k, {F, F, H}, typedCodeletName(nameOf(k), {F, H}));
  }
}

}  // namespace ipusim::model
