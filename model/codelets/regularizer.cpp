// Keras's L1 and L2 regularizers (keras/src/regularizers/regularizers.py):
// the penalty of a region and its gradient.
//   ReducePenalty: in (In), out (Out, float, 1); params l1, l2:
//     out = l1 sum |in| + l2 sum in^2 (float accumulation in 8 lanes, as
//     ReduceSquareAdd). ReducePenalty<half,float>: in half.
//   RegularizerGrad: in (In), out (Out); params l1, l2:
//     out = l1 sign(in) + 2 l2 in (sign(0) = 0: TF's gradient of abs).
//     RegularizerGrad<half>: in and out half.
// Timing, estimates (popops has no such vertices; TF would run a reduction
// per term and elementwise ops): ReducePenalty, per nonzero factor, the cost
// of popops' SQUARE_ADD reduction of the region to a scalar (cycle_model:
// kScalarReduce*, as ReduceSquareAdd): the L2 term is that reduction, the
// L1 term an ABSOLUTE then ADD at the same per-vector rate (an estimate:
// popops reduces |x| no faster than x^2); RegularizerGrad, the UnaryOp2D
// frame and per vector, for a nonzero l1, a compare-and-select for the sign
// and a MULTIPLY, for a nonzero l2 a MULTIPLY, and the ADD joining them.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <cmath>

namespace ipusim::model {
namespace {

void checkFactors(const Codelet& codelet, ShapeCheck& check) {
  const double l1 = check.param("l1"), l2 = check.param("l2");
  if (!(l1 >= 0) || !(l2 >= 0) || !std::isfinite(l1) || !std::isfinite(l2))
    throw std::invalid_argument(codelet.name() + ": l1 and l2 must be finite and >= 0");
}

class ReducePenalty final : public FlatCodelet<ReducePenalty> {
 public:
  explicit ReducePenalty(ir::DType inputType = ir::DType::Float) : inputType_(inputType) {}
  std::string name() const override { return "ReducePenalty"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"l1", "l2"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectNonEmpty("in");
    check.expectSize("out", 1, "the penalty");
    checkFactors(*this, check);
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    namespace c = cycles;
    const std::uint64_t n = shape.fieldSizes[0];
    const std::uint64_t twoVectors = 2 * c::elementsPerVector(target, inputType_);
    const ir::Cycles term = n < 6 ? c::kScalarReduceShortCycles
                                  : (n / twoVectors) * c::kScalarReduceCyclesPerTwoVectors + n % twoVectors;
    const ir::Cycles terms = (shape.params[0] != 0 ? 1 : 0) + (shape.params[1] != 0 ? 1 : 0);
    return c::kScalarReduceOverhead + std::max<ir::Cycles>(1, terms) * term;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float* in = f[0].as<const float>();
    const std::uint64_t n = f[0].size;
    float abs[vec::kLanes] = {}, square[vec::kLanes] = {};
    std::uint64_t i = 0;
    for (; i + vec::kLanes <= n; i += vec::kLanes)
      for (std::uint64_t lane = 0; lane < vec::kLanes; ++lane) {
        abs[lane] += std::fabs(in[i + lane]);
        square[lane] += in[i + lane] * in[i + lane];
      }
    float sumAbs = 0.0f, sumSquare = 0.0f;
    for (std::uint64_t lane = 0; lane < vec::kLanes; ++lane) sumAbs += abs[lane], sumSquare += square[lane];
    for (; i < n; ++i) sumAbs += std::fabs(in[i]), sumSquare += in[i] * in[i];
    *f[1].as<float>() = float(p[0]) * sumAbs + float(p[1]) * sumSquare;
  }

 private:
  ir::DType inputType_;
};

class RegularizerGrad final : public FlatCodelet<RegularizerGrad> {
 public:
  explicit RegularizerGrad(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "RegularizerGrad"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"l1", "l2"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
    checkFactors(*this, check);
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    namespace c = cycles;
    const ir::Cycles perVector = (shape.params[0] != 0 ? c::kSelectCyclesPerVector + c::kArithCyclesPerVector : 0) +
                                 (shape.params[1] != 0 ? c::kArithCyclesPerVector : 0) + c::kArithCyclesPerVector;
    return c::kUnaryOpVertexOverhead + c::vectors(shape.fieldSizes[0], target, vectorType_) * perVector;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float* in = f[0].as<const float>();
    float* out = f[1].as<float>();
    const float l1 = float(p[0]), twoL2 = float(2 * p[1]);
    for (std::uint64_t i = 0; i < f[0].size; ++i) {
      const float x = in[i];
      out[i] = l1 * float((x > 0) - (x < 0)) + twoL2 * x;
    }
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addRegularizerCodelets(CodeletRegistry& registry) {
  using ir::DType;
  registry.add(std::make_unique<ReducePenalty>());
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("ReducePenalty", {DType::Half, DType::Float}),
                                             std::make_unique<ReducePenalty>(DType::Half),
                                             std::vector<DType>{DType::Half, DType::Float}));
  registry.add(std::make_unique<RegularizerGrad>());
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("RegularizerGrad", {DType::Half}),
                                             std::make_unique<RegularizerGrad>(DType::Half),
                                             std::vector<DType>{DType::Half, DType::Half}));
}

}  // namespace ipusim::model
