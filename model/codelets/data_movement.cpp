// Copy, Cast (int -> float), Fill; Copy<half> and Fill<half> (the value
// rounded to half); Cast<float,half> (round to nearest even) and
// Cast<half,float> (exact).
// Timing follows popops (constants and sources in cycle_model.hpp): Copy as
// Cast2D FLOAT -> FLOAT, one cycle per 64-bit vector (2 floats or 4 halves);
// Cast as Cast2D INT -> FLOAT, off the aux pipeline
// (kIntToFloatCyclesPerElement, no vectorisation); Fill as Fill2d (one st64
// per 2 floats or 4 halves). Cast between float and half is Cast2D on the aux
// pipeline:
//   kCastVertexOverhead + ceil(n / castVector.elements) * castVector.cycles
// (cycle_model.hpp castVector: float -> half 2 cycles per 4, half -> float 1
// per 2 on the 64-bit path).
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"
#include "model/numeric/half.hpp"

#include <algorithm>
#include <cstring>

namespace ipusim::model {
namespace {

class Copy final : public FlatCodelet<Copy> {
 public:
  explicit Copy(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
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
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * cycles::kSimpleOpCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double*) const {
    if (f[1].size != 0) std::memmove(f[1].data, f[0].data, f[1].size * sizeof(float));
  }

 private:
  ir::DType vectorType_;
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
  explicit Fill(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return "Fill"; }
  std::vector<FieldSpec> fields() const override { return {{"out", ir::DType::Float, FieldAccess::Out}}; }
  std::vector<std::string> params() const override { return {"value"}; }
  void validate(const VertexShape& shape) const override { ShapeCheck check(*this, shape); }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kFillVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * cycles::kSimpleOpCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    float* out = f[0].as<float>();
    std::fill(out, out + f[0].size, static_cast<float>(params[0]));
  }

 private:
  ir::DType vectorType_;
};

// Cast<float,half> and Cast<half,float>: a conversion on the aux pipeline.
class CastFloatHalf final : public FlatCodelet<CastFloatHalf> {
 public:
  CastFloatHalf(ir::DType from, ir::DType to) : from_(from), to_(to) {}
  std::string name() const override { return typedCodeletName("Cast", {from_, to_}); }
  std::vector<FieldSpec> fields() const override {
    return {{"in", from_, FieldAccess::In}, {"out", to_, FieldAccess::Out}};
  }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const cycles::CastVector vector = cycles::castVector(target, from_, to_);
    return cycles::kCastVertexOverhead + cycles::ceilDiv(shape.fieldSizes[0], vector.elements) * vector.cycles;
  }
  void computeFlat(const FieldData* f, const double*) const {
    const std::uint64_t n = f[1].size;
    if (from_ == ir::DType::Float) {
      const float* in = f[0].as<const float>();
      auto* out = f[1].as<numeric::HalfBits>();
      for (std::uint64_t i = 0; i < n; ++i) out[i] = numeric::floatToHalf(in[i]);
    } else {
      const auto* in = f[0].as<const numeric::HalfBits>();
      float* out = f[1].as<float>();
      for (std::uint64_t i = 0; i < n; ++i) out[i] = numeric::halfToFloat(in[i]);
    }
  }

 private:
  ir::DType from_, to_;
};

}  // namespace

void addDataMovementCodelets(CodeletRegistry& registry) {
  constexpr auto H = ir::DType::Half, F = ir::DType::Float;
  addFloatAndHalf<Copy>(registry);
  registry.add(std::make_unique<Cast>());
  addFloatAndHalf<Fill>(registry);
  registry.add(std::make_unique<CastFloatHalf>(F, H));
  registry.add(std::make_unique<CastFloatHalf>(H, F));
}

}  // namespace ipusim::model
