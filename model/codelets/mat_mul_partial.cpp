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
// keeps blocks of 4 rows x 2 x 16 or 16 (AVX-512 only), 8, 4 or 1 columns of
// out in registers while it walks p in groups of 4 (the order of the
// additions is spelled out below; matmul_kernel.hpp shares the kernel with
// the model's whole products). A transposed a is read with a stride (one scalar per
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
#include "model/codelets/cycle_model.hpp"
#include "model/codelets/flat_codelet.hpp"
#include "model/codelets/float_vectors.hpp"
#include "model/codelets/matmul_kernel.hpp"
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
// where A(i, p) = a[i * aRowStride + p * aColStride]. With k cut into
// slices (the whole-product kernel, matmul_kernel.hpp), each slice's acc is
// computed so from 0.0f and out[i][j] = ((acc0 + acc1) + acc2) + ...
//
// The kernel keeps a block of kRows x lanes outputs in registers for the
// whole p loop (each out element is loaded and stored once, each row of b is
// loaded once per kRows rows of out): the tiles' products are small (11 x 24
// x 12, 28 x 8 x 16) and a loop that streams out rows through memory per
// group of p spent most of its time on loads and stores. V is a GCC vector of
// floats (float_vectors.hpp), or float itself for the scalar tail.
using vec::Float16;
using vec::Float4;
using vec::Float8;
using vec::loadVector;
using vec::storeVector;

// Outputs [i0, i0 + kRows) x [j0, j0 + kVecs vectors V), every k slice:
// each slice summed in registers, the slices' sums added in turn. Two
// vectors a row (kVecs 2) load each a(i, p) once for twice the products:
// one vector a row was bound by its loads.
template <class V, unsigned kRows, unsigned kVecs = 1>
IPUSIM_INLINE void productBlock(const MatMulArgs& x, std::uint64_t i0, std::uint64_t j0) {
  constexpr std::uint64_t kLanes = sizeof(V) / sizeof(float);
  V total[kRows][kVecs];  // fully unrolled loops over r and v keep these in registers
  std::uint64_t k0 = 0;
  do {
    const std::uint64_t k1 = std::min(x.k, k0 + x.kSlice);
    V acc[kRows][kVecs];
#pragma GCC unroll 8
    for (unsigned r = 0; r < kRows; ++r)
#pragma GCC unroll 2
      for (unsigned v = 0; v < kVecs; ++v) {
        acc[r][v] = V{};
        if (x.accumulate && k0 == 0) loadVector(acc[r][v], x.out + (i0 + r) * x.outStride + j0 + v * kLanes);
      }
    std::uint64_t p = k0;
    for (; p + 4 <= k1; p += 4) {
      V b0[kVecs], b1[kVecs], b2[kVecs], b3[kVecs];
#pragma GCC unroll 2
      for (unsigned v = 0; v < kVecs; ++v) {
        const float* bp = x.b + p * x.bStride + j0 + v * kLanes;
        loadVector(b0[v], bp);
        loadVector(b1[v], bp + x.bStride);
        loadVector(b2[v], bp + 2 * x.bStride);
        loadVector(b3[v], bp + 3 * x.bStride);
      }
#pragma GCC unroll 8
      for (unsigned r = 0; r < kRows; ++r) {
        const float* ar = x.a + (i0 + r) * x.aRowStride + p * x.aColStride;
        const std::uint64_t c = x.aColStride;
        const float a0 = ar[0], a1 = ar[c], a2 = ar[2 * c], a3 = ar[3 * c];
#pragma GCC unroll 2
        for (unsigned v = 0; v < kVecs; ++v)
          acc[r][v] = acc[r][v] + (((a0 * b0[v] + a1 * b1[v]) + a2 * b2[v]) + a3 * b3[v]);
      }
    }
    for (; p < k1; ++p) {
      V b0[kVecs];
#pragma GCC unroll 2
      for (unsigned v = 0; v < kVecs; ++v) loadVector(b0[v], x.b + p * x.bStride + j0 + v * kLanes);
#pragma GCC unroll 8
      for (unsigned r = 0; r < kRows; ++r) {
        const float ar = x.a[(i0 + r) * x.aRowStride + p * x.aColStride];
#pragma GCC unroll 2
        for (unsigned v = 0; v < kVecs; ++v) acc[r][v] = acc[r][v] + ar * b0[v];
      }
    }
#pragma GCC unroll 8
    for (unsigned r = 0; r < kRows; ++r)
#pragma GCC unroll 2
      for (unsigned v = 0; v < kVecs; ++v) total[r][v] = k0 == 0 ? acc[r][v] : total[r][v] + acc[r][v];
    k0 = k1;
  } while (k0 < x.k);
#pragma GCC unroll 8
  for (unsigned r = 0; r < kRows; ++r)
#pragma GCC unroll 2
    for (unsigned v = 0; v < kVecs; ++v) storeVector(x.out + (i0 + r) * x.outStride + j0 + v * kLanes, total[r][v]);
}

// Rows [i0, i0 + kRows) of out, every column: 2 x 16 then 16 lanes (kWide
// only), then 8, then 4, then 1.
template <unsigned kRows, bool kWide>
IPUSIM_INLINE void productRows(const MatMulArgs& x, std::uint64_t i0) {
  std::uint64_t j = 0;
  if constexpr (kWide) {
    for (; j + 32 <= x.n; j += 32) productBlock<Float16, kRows, 2>(x, i0, j);
    for (; j + 16 <= x.n; j += 16) productBlock<Float16, kRows>(x, i0, j);
  }
  for (; j + 8 <= x.n; j += 8) productBlock<Float8, kRows>(x, i0, j);
  for (; j + 4 <= x.n; j += 4) productBlock<Float4, kRows>(x, i0, j);
  for (; j < x.n; ++j) productBlock<float, kRows>(x, i0, j);
}

template <bool kWide>
IPUSIM_INLINE void productAll(const MatMulArgs& x) {
  std::uint64_t i = 0;
  for (; i + 4 <= x.m; i += 4) productRows<4, kWide>(x, i);
  for (; i < x.m; ++i) productRows<1, kWide>(x, i);
}

// The kernel in 8 lanes: the baseline and AVX2 clones. `x` by value: a
// local, which no store through x.out can change, stays in registers.
IPUSIM_KERNEL void multiplyAccumulate8(MatMulArgs x) { productAll<false>(x); }

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// The kernel in 16 lanes, for CPUs with AVX-512 (whole rows of 16 floats in
// one register: twice the AVX2 clone's work per instruction where the
// datapath is 512 bits wide). The same operations in the same order.
__attribute__((noinline, target("avx512f"))) void multiplyAccumulate16(MatMulArgs x) { productAll<true>(x); }
#endif

}  // namespace

void multiplyAccumulate(const MatMulArgs& x) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (vec::hasAvx512()) return multiplyAccumulate16(x);
#endif
  multiplyAccumulate8(x);
}

void multiplyAccumulate(const float* a, std::uint64_t aRowStride, std::uint64_t aColStride, const float* b,
                        float* out, std::uint64_t m, std::uint64_t k, std::uint64_t n, bool accumulate) {
  MatMulArgs x;
  x.a = a, x.aRowStride = aRowStride, x.aColStride = aColStride;
  x.b = b, x.bStride = n, x.out = out, x.outStride = n;
  x.m = m, x.k = k, x.n = n, x.kSlice = std::max<std::uint64_t>(k, 1), x.accumulate = accumulate;
  multiplyAccumulate(x);
}

namespace {

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

}  // namespace

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

namespace {

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
