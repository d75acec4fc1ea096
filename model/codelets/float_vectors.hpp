#pragma once
// GCC vectors of floats for the kernels that keep their accumulators in
// registers (mat_mul_partial.cpp, conv_partial.cpp). Operations on them are
// elementwise, so a kernel gives the same bits in any lane width (float
// itself serves as the one-lane "vector" of a scalar tail), and with
// -ffp-contract=off (CMakeLists.txt) a * b + c stays a product rounded, then
// a sum rounded, on every target.

namespace ipusim::model::vec {

using Float16 = float __attribute__((vector_size(64)));
using Float8 = float __attribute__((vector_size(32)));
using Float4 = float __attribute__((vector_size(16)));

// The helpers are always inlined: a helper compiled on its own would be the
// baseline (SSE2) code even when called from a kernel's AVX2 or AVX-512 version.
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

// Whether the CPU runs AVX-512F (the kernels' 16-lane versions).
bool hasAvx512();

}  // namespace ipusim::model::vec
