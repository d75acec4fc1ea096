// Gaussian noise, drawn per element from (seed, step, offset + i)
// (numeric::standardNormal), the same on every tile and in the backward pass:
//   GaussianNoise:      out[i] = in[i] + stddev * n(i)      (Keras's GaussianNoise)
//   GaussianNoiseScale: out[i] = in[i] * (1 + stddev * n(i)) (Keras's
//     GaussianDropout, stddev = sqrt(rate / (1 - rate)); its gradient runs
//     this codelet on the gradient, the same noise)
// Fields: in (float), step (int, 1 element: the tile's copy of the step
// count), out (float); params stddev, seed (< 2^53), offset (the global
// index of in[0]). <half>: in and out half.
// Timing: poprand's Normal vertex (graphcore/poplibs
// lib/poprand/poprandCycleEstimators.cpp: 7 + 3 per region + 2 per vector,
// f32v2grand / f16v4grand and the axpby) followed by the add or multiply
// as a BinaryOp (3 per vector), fused into one vertex.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/numeric/gaussian_noise.hpp"

#include <cmath>
#include <stdexcept>

namespace ipusim::model {
namespace {

template <bool Multiplicative>
class GaussianNoise final : public FlatCodelet<GaussianNoise<Multiplicative>> {
 public:
  explicit GaussianNoise(ir::DType vectorType = ir::DType::Float) : vectorType_(vectorType) {}
  std::string name() const override { return Multiplicative ? "GaussianNoiseScale" : "GaussianNoise"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", ir::DType::Float, FieldAccess::In},
            {"step", ir::DType::Int, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"stddev", "seed", "offset"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("out", "in");
    check.expectSize("step", 1, "the step count");
    const double stddev = check.param("stddev");
    if (!(stddev >= 0 && std::isfinite(stddev)))
      throw std::invalid_argument(name() + ": stddev " + std::to_string(stddev) + " is not a finite number >= 0");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kNormalVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, vectorType_) * cycles::kGaussianNoiseCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* p) const {
    const float* in = f[0].template as<const float>();
    const std::uint64_t step = std::uint64_t(std::int64_t(*f[1].template as<const std::int32_t>()));
    float* out = f[2].template as<float>();
    const float stddev = float(p[0]);
    const std::uint64_t seed = std::uint64_t(p[1]), offset = std::uint64_t(p[2]);
    for (std::uint64_t i = 0; i < f[2].size; ++i) {
      const float noise = stddev * numeric::standardNormal(seed, step, offset + i);
      out[i] = Multiplicative ? in[i] * (1.0f + noise) : in[i] + noise;
    }
  }

 private:
  ir::DType vectorType_;
};

template <class C>
void addWithHalfData(CodeletRegistry& registry) {
  registry.add(std::make_unique<C>());
  registry.add(std::make_unique<HalfCodelet>(typedCodeletName(C().name(), {ir::DType::Half}), std::make_unique<C>(ir::DType::Half),
                                             std::vector<ir::DType>{ir::DType::Half, ir::DType::Int, ir::DType::Half}));
}

}  // namespace

void addGaussianNoiseCodelets(CodeletRegistry& registry) {
  addWithHalfData<GaussianNoise<false>>(registry);
  addWithHalfData<GaussianNoise<true>>(registry);
}

}  // namespace ipusim::model
