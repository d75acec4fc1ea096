#pragma once
// How an embedding's table is stored (scheduler/layers/embedding.cpp): by
// column blocks of `grain` values, [output_dim / grain, input_dim, grain],
// so that a block of rows and columns is one range of the tensor and the
// lookup's grid (planning/embedding_plan.hpp) places it on a tile whole.
// Keras's table[v][c grain + j] is stored element (c input_dim + v) grain + j.
// Header-only: the layer, the planner, the CPU reference and the fuzzers'
// reader build all read it.
#include <cstdint>

namespace ipusim::scheduler {

// The columns of one block: the smallest divisor of `cols` of at least
// kEmbeddingMinGrain elements (`cols` itself when it has none), so a wide
// table spreads over many tiles in pieces a 64-bit vector loop copies
// whole. An estimate of popops' grain (its plan splits the unsliced
// dimension down to a few vectors).
inline constexpr std::uint64_t kEmbeddingMinGrain = 4;
inline std::uint64_t embeddingColumnGrain(std::uint64_t cols) {
  for (std::uint64_t g = kEmbeddingMinGrain; g < cols; ++g)
    if (cols % g == 0) return g;
  return cols;
}

}  // namespace ipusim::scheduler
