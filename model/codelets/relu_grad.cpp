// ReluGrad: gradOut = activation > 0 ? gradIn : 0; ReluGrad<half>: every field half.
// Timing follows popnn's NonLinearityGrad2D RELU (see cycle_model.hpp):
//   kNonLinearityGradVertexOverhead + ceil(n / elementsPerVector) * kReluGradCyclesPerVector
// (2 floats or 4 halves per vector: f16v4cmpgt exists as f32v2cmpgt does).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

namespace ipusim::model {
namespace {

IPUSIM_KERNEL void reluGrad(const float* __restrict activation, const float* __restrict gradIn,
                            float* __restrict gradOut, std::uint64_t n) {
  vec::forEach(n, [=](std::uint64_t i) {
    const float grad = gradIn[i];  // loaded unconditionally, so the select vectorises
    gradOut[i] = activation[i] > 0.0f ? grad : 0.0f;
  });
}

class ReluGrad final : public FlatCodelet<ReluGrad> {
 public:
  // vectorType: the element type of the vector loop the cycles count.
  explicit ReluGrad(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "ReluGrad"; }
  std::vector<FieldSpec> fields() const override {
    return {{"activation", ir::DType::Float, FieldAccess::In},
            {"gradIn", ir::DType::Float, FieldAccess::In},
            {"gradOut", ir::DType::Float, FieldAccess::Out}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("gradIn", "activation");
    check.expectSameSize("gradOut", "activation");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kNonLinearityGradVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * cycles::kReluGradCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double*) const {
    reluGrad(f[0].as<const float>(), f[1].as<const float>(), f[2].as<float>(), f[2].size);
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addReluGradCodelet(CodeletRegistry& registry) { addFloatAndHalf<ReluGrad>(registry); }

}  // namespace ipusim::model
