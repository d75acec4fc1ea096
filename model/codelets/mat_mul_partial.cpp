// MatMulPartial: out (m x n) (+)= op(a) (m x k) . op(b) (k x n), on the AMP.
// `a` is stored k x m when transposeA, `b` is stored n x k when transposeB.
// Typed variants (poplin's ConvPartial<InType, PartialsType> naming):
//   MatMulPartial<half,float>: a, b half; out float (the partials; PopLibs'
//     default partialsType is float);
//   MatMulPartial<half,half>:  a, b half; out half. The products are summed in
//     float and the sum rounded to half once (as the AMP keeps its
//     accumulators wider than its output; per-step half rounding inside the
//     pipeline is not modelled).
//
// compute(): the hot path of a training run. Every case runs one i-k-j kernel
// whose inner loop streams a row of b and a row of out contiguously (and is
// vectorised); k is unrolled by 4 so each out row is loaded and stored once
// per 4 rows of b. A transposed a is read with a stride (one scalar per
// (i, p), the inner loop never touches a); a transposed b is first transposed
// into a per-thread scratch (O(n k), against O(m n k) for the product).
//
// cycles(): a supervisor codelet (it owns the tile's AMP): poplin's
// ConvPartial1x1Out estimate, cycles::ampMatMulCycles (the formula and its
// sources are in cycle_model.hpp), for float or half activations (a, b) and
// float or half partials (out); a first pass zeroes the partials unless
// accumulating. Half activations run at tile.ampHalfMacsPerCycle (see
// cycle_model.hpp for the rate with float partials).
// Transposes cost nothing extra: the compiler lays the operands out for the
// AMP, as poplin does.
#include "model/codelets/builtin_codelets.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/shape_check.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "model/codelets/vector_loop.hpp"

#include <algorithm>
#include <vector>

namespace ipusim::model {
namespace {

// out[i][:] += sum_p A(i, p) * b[p][:], where A(i, p) = a[i * aRowStride + p * aColStride].
IPUSIM_KERNEL void multiplyAccumulate(const float* __restrict a, std::uint64_t aRowStride, std::uint64_t aColStride,
                                      const float* __restrict b, float* __restrict out, std::uint64_t m,
                                      std::uint64_t k, std::uint64_t n) {
  for (std::uint64_t i = 0; i < m; ++i) {
    float* __restrict row = out + i * n;
    const float* aRow = a + i * aRowStride;
    std::uint64_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const float a0 = aRow[p * aColStride], a1 = aRow[(p + 1) * aColStride];
      const float a2 = aRow[(p + 2) * aColStride], a3 = aRow[(p + 3) * aColStride];
      const float* __restrict b0 = b + p * n;
      const float* __restrict b1 = b0 + n;
      const float* __restrict b2 = b1 + n;
      const float* __restrict b3 = b2 + n;
      vec::forEach(n, [=](std::uint64_t j) { row[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j]; });
    }
    for (; p < k; ++p) {
      const float a0 = aRow[p * aColStride];
      const float* __restrict b0 = b + p * n;
      vec::forEach(n, [=](std::uint64_t j) { row[j] += a0 * b0[j]; });
    }
  }
}

// out[i][:] = (accumulate ? out[i][:] : 0) + A(i, 0) * b[:] for k == 1: the
// product of multiplyAccumulate() on a zeroed (or accumulating) out, without
// the separate zeroing pass. "0.0f +" is kept so that a -0.0 product becomes
// +0.0 exactly as it does there (the compiler may not drop it: signed zeros).
IPUSIM_KERNEL void outerProduct(const float* __restrict a, std::uint64_t aRowStride, const float* __restrict b,
                                float* __restrict out, std::uint64_t m, std::uint64_t n, bool accumulate) {
  for (std::uint64_t i = 0; i < m; ++i) {
    float* __restrict row = out + i * n;
    const float a0 = a[i * aRowStride];
    if (accumulate)
      vec::forEach(n, [=](std::uint64_t j) { row[j] += a0 * b[j]; });
    else
      vec::forEach(n, [=](std::uint64_t j) { row[j] = 0.0f + a0 * b[j]; });
  }
}

// dst (cols x rows) = transpose of src (rows x cols), in cache-sized tiles.
IPUSIM_KERNEL void transpose(const float* __restrict src, float* __restrict dst, std::uint64_t rows, std::uint64_t cols) {
  constexpr std::uint64_t kTile = 32;  // 32 x 32 floats = 4 KiB per tile: both sides stay in L1
  for (std::uint64_t r0 = 0; r0 < rows; r0 += kTile)
    for (std::uint64_t c0 = 0; c0 < cols; c0 += kTile) {
      const std::uint64_t rEnd = std::min(rows, r0 + kTile), cEnd = std::min(cols, c0 + kTile);
      for (std::uint64_t r = r0; r < rEnd; ++r)
        for (std::uint64_t c = c0; c < cEnd; ++c) dst[c * rows + r] = src[r * cols + c];
    }
}

class MatMulPartial final : public FlatCodelet<MatMulPartial> {
 public:
  // The operand and output element types the cycles count (compute is float;
  // HalfCodelet converts half fields).
  explicit MatMulPartial(ir::DType inputType = ir::DType::Float, ir::DType outputType = ir::DType::Float)
      : inputType_(inputType), outputType_(outputType) {}
  std::string name() const override { return "MatMulPartial"; }
  std::vector<FieldSpec> fields() const override {
    return {{"a", ir::DType::Float, FieldAccess::In},
            {"b", ir::DType::Float, FieldAccess::In},
            {"out", ir::DType::Float, FieldAccess::InOut}};
  }
  std::vector<std::string> params() const override {
    return {"m", "k", "n", "transposeA", "transposeB", "accumulate"};
  }
  std::vector<ParamDefault> paramDefaults() const override {
    return {{"transposeA", 0}, {"transposeB", 0}, {"accumulate", 0}};
  }
  bool isSupervisor() const override { return true; }

  void validate(const VertexShape& shape) const override {
    ShapeCheck check(*this, shape);
    const auto m = check.dimension("m"), k = check.dimension("k"), n = check.dimension("n");
    const bool transposeA = check.flag("transposeA"), transposeB = check.flag("transposeB");
    check.flag("accumulate");
    check.expectSize("a", m * k, transposeA ? "k x m = " + dims(k, m) : "m x k = " + dims(m, k));
    check.expectSize("b", k * n, transposeB ? "n x k = " + dims(n, k) : "k x n = " + dims(k, n));
    check.expectSize("out", m * n, "m x n = " + dims(m, n));
  }

  ir::Cycles cycles(const VertexShape& shape, const Target& target) const override {
    const auto m = std::uint64_t(shape.params[0]), k = std::uint64_t(shape.params[1]);
    const auto n = std::uint64_t(shape.params[2]);
    const bool accumulate = shape.params[5] != 0;
    return cycles::ampMatMulCycles(m, k, n, !accumulate, inputType_, outputType_, target);
  }

  void computeFlat(const FieldData* f, const double* params) const {
    const auto m = std::uint64_t(params[0]), k = std::uint64_t(params[1]), n = std::uint64_t(params[2]);
    const bool transposeA = params[3] != 0, transposeB = params[4] != 0, accumulate = params[5] != 0;
    const float* a = f[0].as<const float>();
    const float* b = f[1].as<const float>();
    float* out = f[2].as<float>();
    if (k == 1) {
      // b is 1 x n whether or not it is transposed; A(i, 0) is a[i] either way.
      outerProduct(a, 1, b, out, m, n, accumulate);
      return;
    }
    if (!accumulate) std::fill(out, out + m * n, 0.0f);
    if (transposeB) {
      thread_local std::vector<float> scratch;  // b as k x n, reused across calls
      scratch.resize(k * n);
      transpose(b, scratch.data(), n, k);
      b = scratch.data();
    }
    // A(i, p): a[i*k + p] when stored m x k, a[p*m + i] when stored k x m.
    if (transposeA)
      multiplyAccumulate(a, 1, m, b, out, m, k, n);
    else
      multiplyAccumulate(a, k, 1, b, out, m, k, n);
  }

 private:
  ir::DType inputType_;
  ir::DType outputType_;

  static std::string dims(std::uint64_t rows, std::uint64_t cols) {
    return std::to_string(rows) + " x " + std::to_string(cols);
  }
};

}  // namespace

void addMatMulPartialCodelet(CodeletRegistry& registry) {
  constexpr auto H = ir::DType::Half, F = ir::DType::Float;
  registry.add(std::make_unique<MatMulPartial>());
  for (ir::DType out : {F, H})
    registry.add(std::make_unique<HalfCodelet>(typedCodeletName("MatMulPartial", {H, out}),
                                               std::make_unique<MatMulPartial>(H, out), std::vector{H, H, out}));
}

}  // namespace ipusim::model
