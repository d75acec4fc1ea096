#pragma once
// Loops that GCC vectorises at -O2. At -O2, GCC 12 only vectorises a loop
// when no scalar epilogue is needed ("very cheap" cost model), so a plain
// loop over n elements stays scalar. Strip-mining into fixed blocks of kLanes
// (a constant trip count) lets the block be vectorised; the remainder runs
// scalar. Bodies are lambdas capturing __restrict pointers by value.
#include <cstdint>

// Marks a kernel: an out-of-line function whose pointer parameters are
// __restrict. GCC honours restrict on the parameters of a function it compiles
// on its own; inlined into compute(), where the pointers are locals, the
// no-alias facts are lost and -O2 adds no runtime alias check, so the loop
// would stay scalar. One call per vertex costs nothing measurable.
//
// Each kernel is also compiled for AVX2 (target_clones: the loader picks the
// clone the CPU runs, through an ifunc): twice the lanes of the SSE2 baseline
// of an x86-64 build, the same operations in the same order, so the same
// results bit for bit (no FMA: the build has -ffp-contract=off, which a
// target with FMA needs: GCC contracts a * b + c in C++ otherwise). Sanitizer
// builds keep one version: an ifunc resolver runs before the sanitizer's
// runtime is set up.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define IPUSIM_KERNEL __attribute__((noinline, target_clones("avx2", "default")))
#else
#define IPUSIM_KERNEL __attribute__((noinline))
#endif

namespace ipusim::model::vec {

inline constexpr std::uint64_t kLanes = 8;  // two SSE / one AVX register of floats

// body(i) for i in [0, n). A remainder of 4 or more runs as one half block
// (one SSE register): the tiles' matrix products have rows of 4 and 12.
template <class Body>
inline void forEach(std::uint64_t n, Body&& body) {
  std::uint64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::uint64_t lane = 0; lane < kLanes; ++lane) body(i + lane);
  if (i + kLanes / 2 <= n) {
    for (std::uint64_t lane = 0; lane < kLanes / 2; ++lane) body(i + lane);
    i += kLanes / 2;
  }
  for (; i < n; ++i) body(i);
}

// Sum of in[0, n) with kLanes partial sums (vectorisable; the order of the
// additions differs from a left-to-right sum only by rounding).
inline float sum(const float* __restrict in, std::uint64_t n) {
  float partial[kLanes] = {};
  std::uint64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::uint64_t lane = 0; lane < kLanes; ++lane) partial[lane] += in[i + lane];
  float total = 0.0f;
  for (std::uint64_t lane = 0; lane < kLanes; ++lane) total += partial[lane];
  for (; i < n; ++i) total += in[i];
  return total;
}

// Maximum of in[0, n), n >= 1.
inline float max(const float* __restrict in, std::uint64_t n) {
  float partial[kLanes];
  for (std::uint64_t lane = 0; lane < kLanes; ++lane) partial[lane] = in[0];
  std::uint64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::uint64_t lane = 0; lane < kLanes; ++lane)
      partial[lane] = in[i + lane] > partial[lane] ? in[i + lane] : partial[lane];
  float best = partial[0];
  for (std::uint64_t lane = 1; lane < kLanes; ++lane) best = partial[lane] > best ? partial[lane] : best;
  for (; i < n; ++i) best = in[i] > best ? in[i] : best;
  return best;
}

}  // namespace ipusim::model::vec
