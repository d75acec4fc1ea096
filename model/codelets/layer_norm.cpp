// Layer normalization's vertices over `rows` rows of `n` values each, as
// scheduler/layers/layer_normalization.cpp decomposes the layer:
//   LayerNormalise: per row, mean = sum(x) / n, variance = max(sum(x^2) / n
//     - mean^2, 0) (biased, as Keras's ops.moments), invStdDev =
//     1 / sqrt(variance + epsilon); whitened = (x - mean) invStdDev.
//   LayerNormInputGrad: per row, with g the whitened values' gradient,
//     inputGrad = invStdDev (g - mean(g) - whitened mean(g whitened)).
// Sums in float; invStdDev is float. The <half> variants take half rows
// (in, whitened, the gradients).
// Timing (cycle_model.hpp, estimates: popnn chains popops reductions and
// broadcast ops): per vertex the continuous reduction's and the broadcast
// vertex's overheads; per row two continuous reductions of n
// (kContinuousReduceRowOverhead + n / vector + the odd tail) and the
// broadcast row overhead; per vector of the rows the elementwise work; the
// forward adds the per-row statistics, per vector of rows.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ipusim::model {
namespace {

constexpr ir::DType F = ir::DType::Float;

struct RowsShape {
  static std::vector<std::string> params() { return {"rows", "n"}; }
  static void check(const Codelet& c, const VertexShape& shape, std::initializer_list<const char*> rowFields) {
    ShapeCheck check(c, shape);
    const auto rows = check.dimension("rows"), n = check.dimension("n");
    const std::string matrix = "rows x n = " + std::to_string(rows) + " x " + std::to_string(n);
    for (const char* f : rowFields) check.expectSize(f, rows * n, matrix);
    check.expectSize("invStdDev", rows, "rows");
  }
  // The cycles of `rows` rows: two continuous reductions of n each and
  // `perVector` cycles per vector of the row (model/codelets/cycle_model.hpp).
  static ir::Cycles cycles(const VertexShape& shape, const Target& target, ir::DType vectorType, ir::Cycles perVector) {
    const auto rows = std::uint64_t(shape.params[0]), n = std::uint64_t(shape.params[1]);
    const std::uint64_t perVectorElements = cycles::elementsPerVector(target, vectorType);
    const ir::Cycles reduction =
        cycles::kContinuousReduceRowOverhead + n / perVectorElements + (n % 2 ? cycles::kContinuousReduceOddTail : 0);
    return cycles::kContinuousReduceOverhead + cycles::kBroadcastVertexOverhead +
           rows * (2 * reduction + cycles::kBroadcastRowOverhead + cycles::vectors(n, target, vectorType) * perVector);
  }
};

class LayerNormalise final : public FlatCodelet<LayerNormalise> {
 public:
  explicit LayerNormalise(ir::DType vectorType = F) : vectorType_(vectorType) {}
  std::string name() const override { return "LayerNormalise"; }
  std::vector<FieldSpec> fields() const override {
    return {{"in", F, FieldAccess::In}, {"whitened", F, FieldAccess::Out}, {"invStdDev", F, FieldAccess::Out}};
  }
  std::vector<std::string> params() const override { return {"rows", "n", "epsilon"}; }
  void validate(const VertexShape& shape) const override {
    RowsShape::check(*this, shape, {"in", "whitened"});
    const double epsilon = ShapeCheck(*this, shape).param("epsilon");
    if (!(epsilon > 0))
      throw std::invalid_argument("LayerNormalise: param 'epsilon' is " + std::to_string(epsilon) + ", expected > 0");
  }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto rows = std::uint64_t(shape.params[0]);
    return RowsShape::cycles(shape, target, vectorType_, cycles::kLayerNormaliseCyclesPerVector) +
           cycles::vectors(rows, target, F) * cycles::kLayerNormStatisticsCyclesPerVector;
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), n = std::uint64_t(params[1]);
    const float epsilon = float(params[2]);
    const float* in = f[0].as<const float>();
    float* whitened = f[1].as<float>();
    float* invStdDev = f[2].as<float>();
    for (std::uint64_t r = 0; r < rows; ++r) {
      const float* x = in + r * n;
      float sum = 0, squares = 0;
      for (std::uint64_t i = 0; i < n; ++i) sum += x[i], squares += x[i] * x[i];
      const float mean = sum / float(n);
      const float variance = std::max(squares / float(n) - mean * mean, 0.0f);
      const float inv = 1.0f / std::sqrt(variance + epsilon);
      invStdDev[r] = inv;
      for (std::uint64_t i = 0; i < n; ++i) whitened[r * n + i] = (x[i] - mean) * inv;
    }
  }

 private:
  ir::DType vectorType_;
};

class LayerNormInputGrad final : public FlatCodelet<LayerNormInputGrad> {
 public:
  explicit LayerNormInputGrad(ir::DType vectorType = F) : vectorType_(vectorType) {}
  std::string name() const override { return "LayerNormInputGrad"; }
  std::vector<FieldSpec> fields() const override {
    return {{"whitenedGrad", F, FieldAccess::In},
            {"whitened", F, FieldAccess::In},
            {"inputGrad", F, FieldAccess::Out},
            {"invStdDev", F, FieldAccess::In}};
  }
  std::vector<std::string> params() const override { return RowsShape::params(); }
  void validate(const VertexShape& shape) const override { RowsShape::check(*this, shape, {"whitenedGrad", "whitened", "inputGrad"}); }
  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    return RowsShape::cycles(shape, target, vectorType_, cycles::kLayerNormInputGradCyclesPerVector);
  }
  void computeFlat(const FieldData* f, const double* params) const {
    const auto rows = std::uint64_t(params[0]), n = std::uint64_t(params[1]);
    const float* g = f[0].as<const float>();
    const float* w = f[1].as<const float>();
    float* out = f[2].as<float>();
    const float* invStdDev = f[3].as<const float>();
    for (std::uint64_t r = 0; r < rows; ++r) {
      const std::uint64_t at = r * n;
      float sum = 0, dot = 0;
      for (std::uint64_t i = 0; i < n; ++i) sum += g[at + i], dot += g[at + i] * w[at + i];
      const float meanGrad = sum / float(n), meanDot = dot / float(n);
      for (std::uint64_t i = 0; i < n; ++i) out[at + i] = invStdDev[r] * (g[at + i] - meanGrad - w[at + i] * meanDot);
    }
  }

 private:
  ir::DType vectorType_;
};

}  // namespace

void addLayerNormCodelets(CodeletRegistry& registry) {
  addWithHalfActivations<LayerNormalise>(registry, {"in", "whitened"});
  addWithHalfActivations<LayerNormInputGrad>(registry, {"whitenedGrad", "whitened", "inputGrad"});
}

}  // namespace ipusim::model
