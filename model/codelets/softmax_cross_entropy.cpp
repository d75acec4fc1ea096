// SoftmaxCrossEntropy and SoftmaxCrossEntropyGrad over rows x classes logits.
//
// Forward, per row: probs = softmax(logits) computed stably (the row max is
// subtracted before exp, so large logits cannot overflow), and the loss by
// log-sum-exp, loss = log(sum_c exp(x_c - max)) - (x_label - max), which is
// -log(probs[label]) without ever taking log(0) when a probability underflows.
// Grad, per row: grad = scale * (probs - onehot(label)).
// A label outside [0, classes) is data, not shape, so compute() reports it
// (std::invalid_argument naming the codelet, the row, the label).
// Half logits: SoftmaxCrossEntropy<half> reads half logits (probs and loss
// stay float) and SoftmaxCrossEntropyGrad<half> writes a half grad from float
// probs (rounded once). Inside, both compute in float, as popnn's loss does
// for half inputs, so their cycles are the float ones (an estimate: the
// half loads are not cheaper there).
//
// Timing (worker cycles): the forward is one fused vertex doing what popnn's
// SOFTMAX_STABLE and loss do with popops vertices, charged each vertex's
// per-row PopLibs cost (constants in cycle_model.hpp) and one vertex
// overhead; per row, with V = ceil(classes / floatsPerVector):
//   2 x (kContinuousReduceRowOverhead + classes / floatsPerVector (+ odd tail))  max, sum
//   + V x (2 x kAddSubMulCyclesPerVector + kExpCyclesPerVector)                   x - max, exp, x / sum
//   + kScalarReciprocalCycles + kLabelLookupCycles + kScalarLogCycles             1 / sum, the label's loss
// plus kContinuousReduceOverhead once. The gradient is popnn's
// LossCrossEntropyTransform: kLossTransformOverhead + rows x classes x
// kLossTransformCyclesPerElement.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <cmath>
#include <stdexcept>

namespace ipusim::model {
namespace {

std::uint64_t checkedLabel(const char* codelet, const std::int32_t* labels, std::uint64_t row,
                           std::uint64_t classes) {
  const std::int32_t label = labels[row];
  if (label < 0 || std::uint64_t(label) >= classes)
    throw std::invalid_argument(std::string("codelet ") + codelet + ": labels[" + std::to_string(row) +
                                "] = " + std::to_string(label) + ", expected a class in [0, " +
                                std::to_string(classes) + ")");
  return std::uint64_t(label);
}

IPUSIM_KERNEL void scaleInto(const float* __restrict in, float* __restrict out, float scale, std::uint64_t n) {
  vec::forEach(n, [=](std::uint64_t i) { out[i] = scale * in[i]; });
}

class SoftmaxCrossEntropy final : public FlatCodelet<SoftmaxCrossEntropy> {
 public:
  std::string name() const override { return "SoftmaxCrossEntropy"; }
  std::vector<FieldSpec> fields() const override {
    return {{"logits", ir::DType::Float, FieldAccess::In},
            {"labels", ir::DType::Int, FieldAccess::In},
            {"probs", ir::DType::Float, FieldAccess::Out},
            {"loss", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rows", "classes"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows"), classes = check.dimension("classes");
    const std::string matrix = "rows x classes = " + std::to_string(rows) + " x " + std::to_string(classes);
    check.expectSize("logits", rows * classes, matrix);
    check.expectSize("labels", rows, "rows");
    check.expectSize("probs", rows * classes, matrix);
    check.expectSize("loss", rows, "rows");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto rows = std::uint64_t(shape.params[0]), classes = std::uint64_t(shape.params[1]);
    const ir::Cycles vectors = cycles::floatVectors(classes, target);
    const ir::Cycles fold = cycles::kContinuousReduceRowOverhead + classes / cycles::floatsPerVector(target) +
                            (classes % 2 ? cycles::kContinuousReduceOddTail : 0);
    const ir::Cycles perRow = 2 * fold +
                              vectors * (2 * cycles::kAddSubMulCyclesPerVector + cycles::kExpCyclesPerVector) +
                              cycles::kScalarReciprocalCycles + cycles::kLabelLookupCycles + cycles::kScalarLogCycles;
    return cycles::kContinuousReduceOverhead + rows * perRow;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), classes = std::uint64_t(params[1]);
    const std::int32_t* labels = f[1].as<const std::int32_t>();
    float* loss = f[3].as<float>();
    for (std::uint64_t r = 0; r < rows; ++r) {
      const std::uint64_t label = checkedLabel("SoftmaxCrossEntropy", labels, r, classes);
      const float* x = f[0].as<const float>() + r * classes;
      float* p = f[2].as<float>() + r * classes;
      const float rowMax = vec::max(x, classes);
      // exp(x - max) is in (0, 1], and is 1 at the max: the sum is in [1, classes].
      for (std::uint64_t c = 0; c < classes; ++c) p[c] = std::exp(x[c] - rowMax);
      const float sum = vec::sum(p, classes);
      const float inverse = 1.0f / sum;
      vec::forEach(classes, [=](std::uint64_t c) { p[c] *= inverse; });
      loss[r] = std::log(sum) - (x[label] - rowMax);
    }
  }
};

// SoftmaxCrossEntropyGrad, and SoftmaxCrossEntropyGradWeighted, a masked
// loss's gradient (Keras's apply_mask weighs each row): grad = scale x
// weights[r] x (probs - onehot(label)), a `weights` field (rows) before
// `grad`. The weighted one's timing: the plain one's plus one cycle per row
// for its weight (an estimate: popnn's transform already scales every
// element; the row's weight is one more load and multiply of the scale).
template <bool kWeighted>
class SoftmaxCrossEntropyGradOf final : public FlatCodelet<SoftmaxCrossEntropyGradOf<kWeighted>> {
 public:
  std::string name() const override { return kWeighted ? "SoftmaxCrossEntropyGradWeighted" : "SoftmaxCrossEntropyGrad"; }
  std::vector<FieldSpec> fields() const override {
    std::vector<FieldSpec> f = {{"probs", ir::DType::Float, FieldAccess::In}, {"labels", ir::DType::Int, FieldAccess::In}};
    if (kWeighted) f.push_back({"weights", ir::DType::Float, FieldAccess::In});
    f.push_back({"grad", ir::DType::Float, FieldAccess::Out});
    return f;
  }
  std::vector<std::string> params() const override { return {"rows", "classes", "scale"}; }
  std::vector<ParamDefault> paramDefaults() const override { return {{"scale", 1}}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto rows = check.dimension("rows"), classes = check.dimension("classes");
    const std::string matrix = "rows x classes = " + std::to_string(rows) + " x " + std::to_string(classes);
    check.expectSize("probs", rows * classes, matrix);
    check.expectSize("labels", rows, "rows");
    if (kWeighted) check.expectSize("weights", rows, "rows");
    check.expectSize("grad", rows * classes, matrix);
  }
  ir::Cycles cycles(const VertexShape& shape, const Target&) const override {
    const auto rows = std::uint64_t(shape.params[0]), classes = std::uint64_t(shape.params[1]);
    return cycles::kLossTransformOverhead + rows * classes * cycles::kLossTransformCyclesPerElement + (kWeighted ? rows : 0);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), classes = std::uint64_t(params[1]);
    const std::int32_t* labels = f[1].as<const std::int32_t>();
    const FieldData& out = f[kWeighted ? 3 : 2];
    for (std::uint64_t r = 0; r < rows; ++r) {
      const std::uint64_t label = checkedLabel(kWeighted ? "SoftmaxCrossEntropyGradWeighted" : "SoftmaxCrossEntropyGrad",
                                               labels, r, classes);
      const float scale = static_cast<float>(params[2]) * (kWeighted ? f[2].as<const float>()[r] : 1.0f);
      const float* p = f[0].as<const float>() + r * classes;
      float* g = out.as<float>() + r * classes;
      scaleInto(p, g, scale, classes);
      g[label] = scale * (p[label] - 1.0f);
    }
  }
};
using SoftmaxCrossEntropyGrad = SoftmaxCrossEntropyGradOf<false>;
using SoftmaxCrossEntropyGradWeighted = SoftmaxCrossEntropyGradOf<true>;

}  // namespace

void addSoftmaxCrossEntropyCodelets(CodeletRegistry& registry) {
  constexpr auto H = ir::DType::Half, F = ir::DType::Float, I = ir::DType::Int;
  registry.add(std::make_unique<SoftmaxCrossEntropy>());
  registry.add(std::make_unique<SoftmaxCrossEntropyGrad>());
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("SoftmaxCrossEntropy", {H}),
                                             std::make_unique<SoftmaxCrossEntropy>(), std::vector{H, I, F, F}));
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("SoftmaxCrossEntropyGrad", {H}),
                                             std::make_unique<SoftmaxCrossEntropyGrad>(), std::vector{F, I, H}));
  registry.add(std::make_unique<SoftmaxCrossEntropyGradWeighted>());
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("SoftmaxCrossEntropyGradWeighted", {H}),
                                             std::make_unique<SoftmaxCrossEntropyGradWeighted>(), std::vector{F, I, F, H}));
}

}  // namespace ipusim::model
