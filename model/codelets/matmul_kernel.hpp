#pragma once
// The arithmetic of MatMulPartial, shared with the model's whole-product
// kernel (model/hardware/fused_matmul.hpp), so that both give the same bits.
#include <cstdint>

namespace ipusim::model {

// out (m x n) = (accumulate ? out : 0) + A . b, where A(i, p) =
// a[i * aRowStride + p * aColStride], b[p][j] = b[p * bStride + j] and
// out[i][j] = out[i * outStride + j].
// Per output element, k is cut into slices [0, kSlice), [kSlice, 2 kSlice),
// ...; each slice is summed from +0 (or from out, for the first slice when
// accumulating) with p in groups of 4, each group's products summed left to
// right and then added; the slices' sums are then added in order (as a tile
// program's partials are reduced). The order is spelled out in
// mat_mul_partial.cpp. Lanes are elementwise, so the result of an element
// depends on neither m, n, the strides nor the CPU.
struct MatMulArgs {
  const float* a = nullptr;
  std::uint64_t aRowStride = 0, aColStride = 0;
  const float* b = nullptr;
  std::uint64_t bStride = 0;
  float* out = nullptr;
  std::uint64_t outStride = 0;
  std::uint64_t m = 0, k = 0, n = 0;
  std::uint64_t kSlice = 1;  // >= 1; k or more: one slice
  bool accumulate = false;
};
void multiplyAccumulate(const MatMulArgs& args);

// dst (cols x rows) = the transpose of src (rows x cols).
void transpose(const float* __restrict src, float* __restrict dst, std::uint64_t rows, std::uint64_t cols);

// One slice, b k x n and out m x n packed: MatMulPartial's product.
void multiplyAccumulate(const float* a, std::uint64_t aRowStride, std::uint64_t aColStride, const float* b,
                        float* out, std::uint64_t m, std::uint64_t k, std::uint64_t n, bool accumulate);

}  // namespace ipusim::model
