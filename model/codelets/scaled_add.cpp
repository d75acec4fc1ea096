// ScaledAdd: data += scale * deltas (the weight update of SGD), a worker
// vertex. ScaledAdd<half>: data and deltas half (scale * deltas + data in
// float, rounded to half once).
// Timing follows popops' ScaledAdd2D FLOAT (see cycle_model.hpp):
//   kScaledAddVertexOverhead + ceil(n / elementsPerVector) * kScaledAddCyclesPerVector
// (2 floats or 4 halves per vector: f16v4 axpy).
//
// ScaledAddSupervisor (and <half>): the same arithmetic as one supervisor
// vertex whose region the tile's workers split among themselves, as popops'
// scaledAddTo places one on a tile holding a single contiguous region
// (ScaledAdd.cpp: ScaledAddSupervisor, else ScaledAdd2D per worker). Timing:
// popopsCycleEstimators.cpp, scaledArithmeticSupervisorCycleEstimate for ADD
// with a constant scale, not memory constrained, data and deltas of one type:
//   supervisor 12 + 47 + (final == 0 ? 7 : 13) + 12, plus 6 x the slowest
//   worker: 15 + (count / atom ? 6 + 3 (count / atom - 1) : 0) + 2
//   + (the worker taking the remainder: 1 + its final elements) + 1,
// with atom = 8 bytes of elements, count = (n / 6 / atom) x atom,
// final = n % 6, rem = (n / 6) % 6 + ceil(final / atom).
//
// Scale (and <half>): data *= scale in place, a worker vertex: the mean of a
// cross-replica sum (GCL's CollectiveOperator::MEAN, a popops mulInPlace by
// the constant 1 / R). Timing: popops' BinaryOp2D MULTIPLY FLOAT estimate
// (elementwise_binary.cpp), the scalar held in a register:
//   kBinaryOpVertexOverhead + ceil(n / elementsPerVector) * kAddSubMulCyclesPerVector.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <algorithm>

namespace ipusim::model {
namespace {

IPUSIM_KERNEL void scaledAdd(float* __restrict data, const float* __restrict deltas, float scale, std::uint64_t n) {
  vec::forEach(n, [=](std::uint64_t i) { data[i] += scale * deltas[i]; });
}

// The fields, params, checks and arithmetic both vertex forms share;
// `type`: the element type the cycles count (the vector loop's).
template <class Derived>
class ScaledAddForm : public FlatCodelet<Derived> {
 public:
  explicit ScaledAddForm(ir::DType type) : type_(type) {}
  std::vector<FieldSpec> fields() const override {
    return {{"data", ir::DType::Float, FieldAccess::InOut}, {"deltas", ir::DType::Float, FieldAccess::In}};
  }
  std::vector<std::string> params() const override { return {"scale"}; }
  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    check.expectSameSize("deltas", "data");
  }
  void computeFlat(const FieldData* f, const double* params) const {
    scaledAdd(f[0].as<float>(), f[1].as<const float>(), static_cast<float>(params[0]), f[0].size);
  }

 protected:
  ir::DType type_;
};

class ScaledAdd final : public ScaledAddForm<ScaledAdd> {
 public:
  explicit ScaledAdd(ir::DType vectorType = ir::DType::Float) : ScaledAddForm(vectorType) {}
  std::string name() const override { return "ScaledAdd"; }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kScaledAddVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, type_) * cycles::kScaledAddCyclesPerVector;
  }
};

ir::Cycles scaledAddSupervisorCycles(std::uint64_t n, ir::DType type, std::uint64_t workers) {
  const std::uint64_t atom = 8 / ir::sizeOf(type);  // elements in 64 bits
  const std::uint64_t count = (n / workers / atom) * atom;
  const std::uint64_t final = n % workers;
  const std::uint64_t rem = (n / workers) % workers + (final + atom - 1) / atom;
  const ir::Cycles supervisor = 12 + 47 + (final == 0 ? 7 : 13) + 12;
  ir::Cycles slowest = 0;
  for (std::uint64_t worker = 0; worker <= workers; ++worker) {  // as the estimator's loop
    ir::Cycles c = 15;
    if (count / atom != 0) c += 6 + 3 * (count / atom - 1);
    c += 2;
    if (worker == rem) {
      c += 1;
      if (final != 0) {
        if (type == ir::DType::Float) {
          c += 8;
        } else {
          c += 5 + (final >= 2 ? 7 : 0) + (final == 3 ? 6 : 0);
        }
      }
    }
    c += 1;
    slowest = std::max(slowest, c);
  }
  return supervisor + slowest * workers;
}

class ScaledAddSupervisor final : public ScaledAddForm<ScaledAddSupervisor> {
 public:
  explicit ScaledAddSupervisor(ir::DType type = ir::DType::Float) : ScaledAddForm(type) {}
  std::string name() const override { return "ScaledAddSupervisor"; }
  bool isSupervisor() const override { return true; }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return scaledAddSupervisorCycles(shape.fieldSizes[0], type_, std::max<std::uint32_t>(1, target.tile.workerContexts));
  }
};

IPUSIM_KERNEL void scaleInPlace(float* __restrict data, float scale, std::uint64_t n) {
  vec::forEach(n, [=](std::uint64_t i) { data[i] *= scale; });
}

class Scale final : public FlatCodelet<Scale> {
 public:
  explicit Scale(ir::DType type = ir::DType::Float) : type_(type) {}
  std::string name() const override { return "Scale"; }
  std::vector<FieldSpec> fields() const override { return {{"data", ir::DType::Float, FieldAccess::InOut}}; }
  std::vector<std::string> params() const override { return {"scale"}; }
  void computeFlat(const FieldData* f, const double* params) const {
    scaleInPlace(f[0].as<float>(), static_cast<float>(params[0]), f[0].size);
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return cycles::kBinaryOpVertexOverhead +
           cycles::vectors(shape.fieldSizes[0], target, type_) * cycles::kAddSubMulCyclesPerVector;
  }

 private:
  ir::DType type_;
};

}  // namespace

void addScaledAddCodelet(CodeletRegistry& registry) {
  addFloatAndHalf<ScaledAdd>(registry);
  addFloatAndHalf<ScaledAddSupervisor>(registry);
  addFloatAndHalf<Scale>(registry);
}

}  // namespace ipusim::model
