#pragma once
// The product Dense and EinsumDense compute over rows: x [rows, inner] .
// kernel [inner, columns] (+ bias over the columns), the kernel cast to the
// compute type under mixed_float16. Backward: the bias gradient (ReduceRows),
// the kernel gradient x^T . grad, the input gradient grad . kernel^T.
#include "scheduler/layers/layer.hpp"

#include <cstdint>

namespace ipusim::scheduler {

struct DenseProduct {
  std::uint64_t rows = 0, inner = 0, columns = 0;
  std::uint64_t fanIn = 0, fanOut = 0;  // the kernel's Glorot fans (Keras's compute_fans of its stored shape)
  Shape kerasKernel, kerasBias;         // the weights' shapes as Keras stores them, when not [inner, columns], [columns]
};

// `x` is [rows, inner]; returns [rows, columns] with the bias added (when l.useBias).
std::size_t addDenseProduct(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t x, const DenseProduct& p);

}  // namespace ipusim::scheduler
