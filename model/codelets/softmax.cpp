// Softmax and SoftmaxGrad over one axis of a tensor that is `groups` blocks
// of n x inner elements (the axis has n positions, each holding `inner`
// contiguous values: the axis's stride), each block normalised along its n
// positions: out = exp(x - max) / sum exp(x - max), the max subtracted for
// stability as Keras's softmax (and popnn's SOFTMAX_STABLE) does; the
// gradient from the output: gradOut = y (gradIn - sum_n(gradIn y)). Sums and
// maxima in float. Half variants: every field half (HalfCodelet).
//
// Timing, worker cycles: popnn builds the stable softmax and its gradient
// from popops vertices (lib/popnn/NonLinearity.cpp softmaxImpl,
// softmaxInputGradientImpl): reductions along the axis, elementwise ops and a
// reciprocal of each sum. One fused vertex is charged their PopLibs costs
// (cycle_model.hpp) and one reduction overhead: per block, each reduction as
// popops' continuous reduction of a row of n (inner = 1; kContinuousReduce*)
// or its strided reduction of n rows into `inner` outputs (kStridedReduce*),
// and per 64-bit vector of the block SUBTRACT + EXPONENT + MULTIPLY (forward)
// or MULTIPLY + SUBTRACT + MULTIPLY (gradient); the forward adds one DIVIDE
// per vector of sums (the reciprocals).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace ipusim::model {
namespace {

struct SoftmaxShape {
  std::uint64_t groups, n, inner;
  static SoftmaxShape of(const double* p) { return {std::uint64_t(p[0]), std::uint64_t(p[1]), std::uint64_t(p[2])}; }
};

// One reduction of a block along its axis (popops' estimate), `completion`
// cycles for the strided loop's op (ADD or MAX).
ir::Cycles reductionCycles(const SoftmaxShape& s, std::uint64_t perVector, ir::Cycles completion) {
  if (s.inner == 1)
    return cycles::kContinuousReduceRowOverhead + s.n / perVector + (s.n % 2 ? cycles::kContinuousReduceOddTail : 0);
  const std::uint64_t group = std::gcd(perVector, s.inner);
  return cycles::ceilDiv(s.inner, group) *
         (cycles::kStridedReduceGroupOverhead + completion + cycles::kStridedReduceStore + (s.n - 1));
}

ir::Cycles reductionOverhead(const SoftmaxShape& s) {
  return s.inner == 1 ? cycles::kContinuousReduceOverhead : cycles::kStridedReduceOverhead;
}

class SoftmaxBase {
 protected:
  static std::vector<std::string> shapeParams() { return {"groups", "n", "inner"}; }
  static void validateShape(const Codelet& codelet, const VertexShape& shape, std::initializer_list<const char*> fields) {
    ShapeCheck check(codelet, shape);
    const std::uint64_t size = check.dimension("groups") * check.dimension("n") * check.dimension("inner");
    for (const char* f : fields) check.expectSize(f, size, "groups x n x inner");
  }
};

class Softmax final : public FlatCodelet<Softmax>, SoftmaxBase {
 public:
  explicit Softmax(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "Softmax"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return shapeParams(); }
  void validate(const VertexShape& shape) const override { validateShape(*this, shape, {"in", "out"}); }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const SoftmaxShape s = SoftmaxShape::of(shape.params.data());
    const bool half = vectorType_ == ir::DType::Half;
    const std::uint64_t perVector = cycles::elementsPerVector(target, vectorType_);
    const ir::Cycles exp = half ? cycles::kExpHalfCyclesPerVector : cycles::kExpCyclesPerVector;
    const ir::Cycles divide = half ? cycles::kDivideHalfCyclesPerVector : cycles::kDivideCyclesPerVector;
    const ir::Cycles perGroup = reductionCycles(s, perVector, cycles::kStridedReduceMaxCompletion) +
                                reductionCycles(s, perVector, cycles::kStridedReduceAddCompletion) +
                                cycles::vectors(s.n * s.inner, target, vectorType_) * (2 * cycles::kArithCyclesPerVector + exp) +
                                cycles::ceilDiv(s.inner, perVector) * divide;
    return reductionOverhead(s) + s.groups * perGroup;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const SoftmaxShape s = SoftmaxShape::of(params);
    const float* in = f[0].as<const float>();
    float* out = f[1].as<float>();
    std::vector<float> max(s.inner), sum(s.inner);
    for (std::uint64_t g = 0; g < s.groups; ++g) {
      const float* x = in + g * s.n * s.inner;
      float* y = out + g * s.n * s.inner;
      std::copy(x, x + s.inner, max.begin());
      for (std::uint64_t i = 1; i < s.n; ++i)
        for (std::uint64_t j = 0; j < s.inner; ++j) max[j] = std::max(max[j], x[i * s.inner + j]);
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (std::uint64_t i = 0; i < s.n; ++i)
        for (std::uint64_t j = 0; j < s.inner; ++j) sum[j] += y[i * s.inner + j] = std::exp(x[i * s.inner + j] - max[j]);
      for (float& v : sum) v = 1.0f / v;
      for (std::uint64_t i = 0; i < s.n; ++i)
        for (std::uint64_t j = 0; j < s.inner; ++j) y[i * s.inner + j] *= sum[j];
    }
  }

 private:
  ir::DType vectorType_;
};

class SoftmaxGrad final : public FlatCodelet<SoftmaxGrad>, SoftmaxBase {
 public:
  explicit SoftmaxGrad(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "SoftmaxGrad"; }
  std::vector<FieldSpec> fields() const override {
    return {{"activation", ir::DType::Float, FieldAccess::In},
            {"gradIn", ir::DType::Float, FieldAccess::In},
            {"gradOut", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return shapeParams(); }
  void validate(const VertexShape& shape) const override {
    validateShape(*this, shape, {"activation", "gradIn", "gradOut"});
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const SoftmaxShape s = SoftmaxShape::of(shape.params.data());
    const std::uint64_t perVector = cycles::elementsPerVector(target, vectorType_);
    const ir::Cycles perGroup = reductionCycles(s, perVector, cycles::kStridedReduceAddCompletion) +
                                cycles::vectors(s.n * s.inner, target, vectorType_) * 3 * cycles::kArithCyclesPerVector;
    return reductionOverhead(s) + s.groups * perGroup;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const SoftmaxShape s = SoftmaxShape::of(params);
    const float* y = f[0].as<const float>();
    const float* g = f[1].as<const float>();
    float* out = f[2].as<float>();
    std::vector<float> dot(s.inner);
    for (std::uint64_t b = 0; b < s.groups; ++b) {
      const std::uint64_t at = b * s.n * s.inner;
      std::fill(dot.begin(), dot.end(), 0.0f);
      for (std::uint64_t i = 0; i < s.n; ++i)
        for (std::uint64_t j = 0; j < s.inner; ++j) dot[j] += g[at + i * s.inner + j] * y[at + i * s.inner + j];
      for (std::uint64_t i = 0; i < s.n; ++i)
        for (std::uint64_t j = 0; j < s.inner; ++j) {
          const std::uint64_t e = at + i * s.inner + j;
          out[e] = y[e] * (g[e] - dot[j]);
        }
    }
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addSoftmaxCodelets(CodeletRegistry& registry) {
  addFloatAndHalf<Softmax>(registry);
  addFloatAndHalf<SoftmaxGrad>(registry);
}

}  // namespace ipusim::model
