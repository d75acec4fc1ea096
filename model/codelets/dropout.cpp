// Dropout: out[i] = keeps(i) ? in[i] / (1 - rate) : 0, where keeps(i) is
// numeric::dropoutKeeps(seed, step[0], offset + i, rate): the mask of the
// tensor's element offset + i at this step, the same on every tile and in
// the backward pass (which runs this codelet on the gradient). Fields: in
// (float), step (int, 1 element: the tile's copy of the step count), out
// (float); params rate, seed (< 2^53), offset (the global index of in[0]).
// Dropout<half>: in and out half.
// Timing, estimate (PopLibs' poprand has its own dropout vertex; its
// estimator is not read here): the UnaryOp2D frame (kUnaryOpVertexOverhead)
// and kDropoutCyclesPerVector per 64-bit vector: one urand64 (64 random bits
// a cycle) then compare, select and scale, single-cycle f32v2/f16v4 ops.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/numeric/dropout_mask.hpp"

#include <cmath>

namespace ipusim::model {
namespace {

class Dropout final : public FlatCodelet<Dropout> {
 public:
  explicit Dropout(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "Dropout"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In},
            {"step", ir::DType::Int, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rate", "seed", "offset"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
    check.expectSize("step", 1, "the step count");
    const double rate = check.param("rate");
    if (!(rate >= 0 && rate < 1)) throw std::invalid_argument("Dropout: rate " + std::to_string(rate) + " is not in [0, 1)");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kUnaryOpVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * cycles::kDropoutCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float* in = f[0].as<const float>();
    const std::uint64_t step = std::uint64_t(std::int64_t(*f[1].as<const std::int32_t>()));
    float* out = f[2].as<float>();
    const float rate = float(p[0]);
    const std::uint64_t seed = std::uint64_t(p[1]), offset = std::uint64_t(p[2]);
    const float scale = 1.0f / (1.0f - rate);
    for (std::uint64_t i = 0; i < f[2].size; ++i)
      out[i] = ipusim::numeric::dropoutKeeps(seed, step, offset + i, rate) ? in[i] * scale : 0.0f;
  }

 private:
  ir::DType vectorType_;
};

// The step count: data[i] += 1 on each tile's copy.
class Increment final : public FlatCodelet<Increment> {
 public:
  std::string name() const override { return "Increment"; }
  std::vector<FieldSpec> fields() const override { return {{"data", ir::DType::Int, FieldAccess::InOut}}; }
  ir::Cycles cycles(const VertexShape& shape, const Target&) const override {
    return cycles::kBinaryOpVertexOverhead + shape.fieldSizes[0] * cycles::kIntAddCyclesPerElement;
  }
  void computeFlat(const FieldData* f, const double*) const {
    std::int32_t* d = f[0].as<std::int32_t>();
    for (std::uint64_t i = 0; i < f[0].size; ++i) ++d[i];
  }
};

}  // namespace

void addDropoutCodelets(CodeletRegistry& registry) {
  registry.add(std::make_unique<Dropout>());
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName("Dropout", {ir::DType::Half}),
                                             std::make_unique<Dropout>(ir::DType::Half),
                                             std::vector<ir::DType>{ir::DType::Half, ir::DType::Int, ir::DType::Half}));
  registry.add(std::make_unique<Increment>());
}

}  // namespace ipusim::model
