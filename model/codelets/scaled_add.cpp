// ScaledAdd: data += scale * deltas (the weight update of SGD).
// ScaledAdd<half>: data and deltas half (scale * deltas + data in float,
// rounded to half once).
// Timing follows popops' ScaledAdd2D FLOAT (see cycle_model.hpp):
//   kScaledAddVertexOverhead + ceil(n / elementsPerVector) * kScaledAddCyclesPerVector
// (2 floats or 4 halves per vector: f16v4 axpy).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

namespace ipusim::model {
namespace {

IPUSIM_KERNEL void scaledAdd(float* __restrict data, const float* __restrict deltas, float scale, std::uint64_t n) {
  vec::forEach(n, [=](std::uint64_t i) { data[i] += scale * deltas[i]; });
}

class ScaledAdd final : public FlatCodelet<ScaledAdd> {
 public:
  // vectorType: the element type of the vector loop the cycles count.
  explicit ScaledAdd(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "ScaledAdd"; }
  std::vector<FieldSpec> fields() const override {
    return {{"data", ir::DType::Float, FieldAccess::InOut}, {"deltas", ir::DType::Float, FieldAccess::In}};
  }
  std::vector<std::string> params() const override { return {"scale"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("deltas", "data");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kScaledAddVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * cycles::kScaledAddCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    scaledAdd(f[0].as<float>(), f[1].as<const float>(), static_cast<float>(params[0]), f[0].size);
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addScaledAddCodelet(CodeletRegistry& registry) { addFloatAndHalf<ScaledAdd>(registry); }

}  // namespace ipusim::model
