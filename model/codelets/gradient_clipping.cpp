// Keras's gradient clipping (base_optimizer.py _clip_gradients), elementwise
// over a gradient's region, and the sum of squares its norms are made of:
//   ReduceSquareAdd: in (In), out (Out, float, 1): out = sum in^2 (float
//     accumulation in 8 lanes). ReduceSquareAdd<half,float>: in half.
//   ClipByNorm: in (In), normSquared (In, float, 1), out (Out); params
//     clipNorm, global (0/1). With n = sqrt(normSquared):
//       global 0 (Keras's _clip_by_norm): out = in * clipNorm / max(n, clipNorm)
//         (n = 0 when normSquared is 0);
//       global 1 (clip_by_global_norm): out = in * (clipNorm * min(1 / n, 1 / clipNorm) + (n - n)),
//         so a NaN or infinite norm makes every element NaN, as Keras's.
//     ClipByNorm<half>: in and out half.
//   ClipByValue: in (In), out (Out); param clipValue: out = min(max(in, -clipValue), clipValue).
//     ClipByValue<half>: in and out half.
// Timing: ReduceSquareAdd is popops' SQUARE_ADD reduction of one region to a
// scalar (cycle_model: kScalarReduce*); ClipByValue popops' Clamp in the
// UnaryOp2D frame; ClipByNorm, estimate: the UnaryOp2D frame, its scalar
// factor once (sqrt, max or min, a divide) and a MULTIPLY per vector.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::model {
namespace {

class ReduceSquareAdd final : public FlatCodelet<ReduceSquareAdd> {
 public:
  explicit ReduceSquareAdd(ir::DType inputType = ir::DType::Float) : inputType_(inputType) {}
  std::string name() const override { return "ReduceSquareAdd"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectNonEmpty("in");
    check.expectSize("out", 1, "the sum");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    namespace c = cycles;
    const std::uint64_t n = shape.fieldSizes[0];
    const std::uint64_t twoVectors = 2 * c::elementsPerVector(target, inputType_);
    return c::kScalarReduceOverhead + (n < 6 ? c::kScalarReduceShortCycles
                                             : (n / twoVectors) * c::kScalarReduceCyclesPerTwoVectors + n % twoVectors);
  }
  void computeFlat(const FieldData* f, const double*) const {
    const float* in = f[0].as<const float>();
    const std::uint64_t n = f[0].size;
    float partial[vec::kLanes] = {};
    std::uint64_t i = 0;
    for (; i + vec::kLanes <= n; i += vec::kLanes)
      for (std::uint64_t lane = 0; lane < vec::kLanes; ++lane) partial[lane] += in[i + lane] * in[i + lane];
    float total = 0.0f;
    for (float p : partial) total += p;
    for (; i < n; ++i) total += in[i] * in[i];
    *f[1].as<float>() = total;
  }

 private:
  ir::DType inputType_;
};

class ClipByNorm final : public FlatCodelet<ClipByNorm> {
 public:
  explicit ClipByNorm(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "ClipByNorm"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In},
            {"normSquared", ir::DType::Float, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"clipNorm", "global"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
    check.expectSize("normSquared", 1, "the squared norm");
    check.flag("global");
    if (!(check.param("clipNorm") > 0)) throw std::invalid_argument("ClipByNorm: clipNorm must be positive");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    namespace c = cycles;
    const ir::Cycles factor = c::kSqrtCyclesPerVector + c::kMinMaxCyclesPerVector + c::kScalarReciprocalCycles;
    return c::kUnaryOpVertexOverhead + factor + c::vectors(shape.fieldSizes[0], target, vectorType_) * c::kArithCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float* in = f[0].as<const float>();
    const float sum = *f[1].as<const float>();
    float* out = f[2].as<float>();
    const float clip = float(p[0]);
    float scale;
    if (p[1] != 0) {  // clip_by_global_norm
      const float norm = std::sqrt(sum);
      scale = clip * std::min(1.0f / norm, 1.0f / clip) + (norm - norm);
    } else {  // _clip_by_norm: the norm is 0 where the sum is (never the square root of 0's NaN gradient)
      const float norm = sum > 0 ? std::sqrt(sum) : sum;
      scale = clip / std::max(norm, clip);
    }
    for (std::uint64_t i = 0; i < f[0].size; ++i) out[i] = in[i] * scale;
  }

 private:
  ir::DType vectorType_;
};

class ClipByValue final : public FlatCodelet<ClipByValue> {
 public:
  explicit ClipByValue(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "ClipByValue"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"clipValue"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kUnaryOpVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * cycles::kClampCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float* in = f[0].as<const float>();
    float* out = f[1].as<float>();
    const float v = float(p[0]);
    for (std::uint64_t i = 0; i < f[0].size; ++i) out[i] = std::min(std::max(in[i], -v), v);
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addGradientClippingCodelets(CodeletRegistry& registry) {
  using ir::DType;
  registry.add(std::make_unique<ReduceSquareAdd>());
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("ReduceSquareAdd", {DType::Half, DType::Float}),
                                             std::make_unique<ReduceSquareAdd>(DType::Half),
                                             std::vector<DType>{DType::Half, DType::Float}));
  registry.add(std::make_unique<ClipByNorm>());
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("ClipByNorm", {DType::Half}),
                                             std::make_unique<ClipByNorm>(DType::Half),
                                             std::vector<DType>{DType::Half, DType::Float, DType::Half}));
  registry.add(std::make_unique<ClipByValue>());
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("ClipByValue", {DType::Half}),
                                             std::make_unique<ClipByValue>(DType::Half),
                                             std::vector<DType>{DType::Half, DType::Half}));
}

}  // namespace ipusim::model
