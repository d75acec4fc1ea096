// ReluGrad: gradOut = activation > 0 ? gradIn : 0.
// Timing follows popnn's NonLinearityGrad2D RELU (see cycle_model.hpp):
//   kNonLinearityGradVertexOverhead + ceil(n / floatsPerVector) * kReluGradCyclesPerVector.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
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
           cycles::floatVectors(shape.fieldSizes[0], target) * cycles::kReluGradCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double*) const {
    reluGrad(f[0].as<const float>(), f[1].as<const float>(), f[2].as<float>(), f[2].size);
  }
};

}  // namespace

void addReluGradCodelet(CodeletRegistry& registry) { registry.add(std::make_unique<ReluGrad>()); }

}  // namespace ipusim::model
