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
// compute(): the hot path of a training run. Every case runs one kernel that
// keeps blocks of 4 rows x 8 (or 4, or 1) columns of out in registers while
// it walks p in groups of 4 (the order of the additions is spelled out at
// multiplyAccumulate). A transposed a is read with a stride (one scalar per
// (i, p)); a transposed b is first transposed into a per-thread scratch
// (O(n k), against O(m n k) for the product).
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

// The arithmetic of one output element, the vertex's order (the contract
// every kernel below keeps, bit for bit):
//   acc = accumulate ? out[i][j] : 0.0f
//   for each group of 4 p:  acc = acc + (((A(i,p) b[p][j] + A(i,p+1) b[p+1][j]) + A(i,p+2) b[p+2][j]) + A(i,p+3) b[p+3][j])
//   for each remaining p:   acc = acc + A(i,p) b[p][j]
//   out[i][j] = acc
// where A(i, p) = a[i * aRowStride + p * aColStride].
//
// The kernel keeps a block of kRows x lanes outputs in registers for the
// whole p loop (each out element is loaded and stored once, each row of b is
// loaded once per kRows rows of out): the tiles' products are small (11 x 24
// x 12, 28 x 8 x 16) and a loop that streams out rows through memory per
// group of p spent most of its time on loads and stores. V is a GCC vector of
// floats (or float itself for the scalar tail); operations are elementwise,
// so every lane width gives the same bits.
using Float8 = float __attribute__((vector_size(32)));
using Float4 = float __attribute__((vector_size(16)));

// The helpers are always inlined: a helper compiled on its own would be the
// baseline (SSE2) code even when called from the kernel's AVX2 clone.
#define IPUSIM_INLINE inline __attribute__((always_inline))

// Vectors pass by reference: a by-value AVX vector in a baseline-compiled
// signature draws GCC's ABI warning (-Wpsabi), although these are inlined.
template <class V>
IPUSIM_INLINE void loadVector(V& v, const float* p) {
  __builtin_memcpy(&v, p, sizeof(V));
}
template <class V>
IPUSIM_INLINE void storeVector(float* p, const V& v) {
  __builtin_memcpy(p, &v, sizeof(V));
}

// Outputs [i0, i0 + kRows) x [j0, j0 + lanes of V).
template <class V, unsigned kRows>
IPUSIM_INLINE void productBlock(const float* __restrict a, std::uint64_t aRowStride, std::uint64_t aColStride,
                                const float* __restrict b, float* __restrict out, std::uint64_t i0,
                                std::uint64_t j0, std::uint64_t k, std::uint64_t n, bool accumulate) {
  V acc[kRows];  // fully unrolled loops over r keep these in registers
#pragma GCC unroll 4
  for (unsigned r = 0; r < kRows; ++r) {
    acc[r] = V{};
    if (accumulate) loadVector(acc[r], out + (i0 + r) * n + j0);
  }
  std::uint64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    V b0, b1, b2, b3;
    loadVector(b0, b + p * n + j0);
    loadVector(b1, b + (p + 1) * n + j0);
    loadVector(b2, b + (p + 2) * n + j0);
    loadVector(b3, b + (p + 3) * n + j0);
#pragma GCC unroll 4
    for (unsigned r = 0; r < kRows; ++r) {
      const float* ar = a + (i0 + r) * aRowStride + p * aColStride;
      const float a0 = ar[0], a1 = ar[aColStride], a2 = ar[2 * aColStride], a3 = ar[3 * aColStride];
      acc[r] = acc[r] + (((a0 * b0 + a1 * b1) + a2 * b2) + a3 * b3);
    }
  }
  for (; p < k; ++p) {
    V b0;
    loadVector(b0, b + p * n + j0);
#pragma GCC unroll 4
    for (unsigned r = 0; r < kRows; ++r) acc[r] = acc[r] + a[(i0 + r) * aRowStride + p * aColStride] * b0;
  }
#pragma GCC unroll 4
  for (unsigned r = 0; r < kRows; ++r) storeVector(out + (i0 + r) * n + j0, acc[r]);
}

// Rows [i0, i0 + kRows) of out, every column: 8 lanes, then 4, then 1.
template <unsigned kRows>
IPUSIM_INLINE void productRows(const float* __restrict a, std::uint64_t aRowStride, std::uint64_t aColStride,
                               const float* __restrict b, float* __restrict out, std::uint64_t i0, std::uint64_t k,
                               std::uint64_t n, bool accumulate) {
  std::uint64_t j = 0;
  for (; j + 8 <= n; j += 8) productBlock<Float8, kRows>(a, aRowStride, aColStride, b, out, i0, j, k, n, accumulate);
  for (; j + 4 <= n; j += 4) productBlock<Float4, kRows>(a, aRowStride, aColStride, b, out, i0, j, k, n, accumulate);
  for (; j < n; ++j) productBlock<float, kRows>(a, aRowStride, aColStride, b, out, i0, j, k, n, accumulate);
}

// out (m x n) = (accumulate ? out : 0) + A . b (k x n), in the order above.
IPUSIM_KERNEL void multiplyAccumulate(const float* __restrict a, std::uint64_t aRowStride, std::uint64_t aColStride,
                                      const float* __restrict b, float* __restrict out, std::uint64_t m,
                                      std::uint64_t k, std::uint64_t n, bool accumulate) {
  std::uint64_t i = 0;
  for (; i + 4 <= m; i += 4) productRows<4>(a, aRowStride, aColStride, b, out, i, k, n, accumulate);
  for (; i < m; ++i) productRows<1>(a, aRowStride, aColStride, b, out, i, k, n, accumulate);
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
    if (transposeB) {
      thread_local std::vector<float> scratch;  // b as k x n, reused across calls
      scratch.resize(k * n);
      transpose(b, scratch.data(), n, k);
      b = scratch.data();
    }
    // A(i, p): a[i*k + p] when stored m x k, a[p*m + i] when stored k x m.
    if (transposeA)
      multiplyAccumulate(a, 1, m, b, out, m, k, n, accumulate);
    else
      multiplyAccumulate(a, k, 1, b, out, m, k, n, accumulate);
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
