// Copy, Cast (int -> float), Fill.
// Timing follows popops (constants and sources in cycle_model.hpp): Copy as
// Cast2D FLOAT -> FLOAT, one cycle per 64-bit vector; Cast as Cast2D INT ->
// FLOAT, off the aux pipeline (kIntToFloatCyclesPerElement, no
// vectorisation); Fill as Fill2d (one st64 per 2 floats).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/vector_loop.hpp"

#include <algorithm>
#include <cstring>

namespace ipusim::model {
namespace {

class Copy final : public FlatCodelet<Copy> {
 public:
  std::string name() const override { return "Copy"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kCopyVertexOverhead +
           cycles::floatVectors(shape.fieldSizes[0], target) * cycles::kSimpleOpCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double*) const {
    if (f[1].size != 0) std::memmove(f[1].data, f[0].data, f[1].size * sizeof(float));
  }
};

IPUSIM_KERNEL void intToFloat(const std::int32_t* __restrict in, float* __restrict out, std::uint64_t n) {
  vec::forEach(n, [=](std::uint64_t i) { out[i] = static_cast<float>(in[i]); });
}

class Cast final : public FlatCodelet<Cast> {
 public:
  std::string name() const override { return "Cast"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Int, FieldAccess::In}, {"out", ir::DType::Float, FieldAccess::Out}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target&) const override {
    return cycles::kCastVertexOverhead + shape.fieldSizes[0] * cycles::kIntToFloatCyclesPerElement;
  }
  void computeFlat(const FieldData* f, const double*) const {
    intToFloat(f[0].as<const std::int32_t>(), f[1].as<float>(), f[1].size);
  }
};

class Fill final : public FlatCodelet<Fill> {
 public:
  std::string name() const override { return "Fill"; }
  std::vector<FieldSpec> fields() const override { return {{"out", ir::DType::Float, FieldAccess::Out}}; }
  std::vector<std::string> params() const override { return {"value"}; }
  void validate(const VertexShape& shape) const override { ShapeCheck check(*this, shape); }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kFillVertexOverhead +
           cycles::floatVectors(shape.fieldSizes[0], target) * cycles::kSimpleOpCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    float* out = f[0].as<float>();
    std::fill(out, out + f[0].size, static_cast<float>(params[0]));
  }
};

}  // namespace

void addDataMovementCodelets(CodeletRegistry& registry) {
  registry.add(std::make_unique<Copy>());
  registry.add(std::make_unique<Cast>());
  registry.add(std::make_unique<Fill>());
}

}  // namespace ipusim::model
