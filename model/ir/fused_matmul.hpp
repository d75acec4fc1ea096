#pragma once
// FusedMatMul: a matrix product that the compiler lowered tile by tile
// (gather each tile's operand blocks; one MatMulPartial per tile over a slice
// of k; bring the partials to the output's owners and reduce them), described
// whole, so that the model may compute it in one kernel with the same result
// bit for bit (model/hardware/fused_matmul.hpp says how, and when it may).
//
// Per output element, the tile program's order is: each k slice summed from
// +0 in the MatMulPartial order (groups of 4), then the slices' partials
// added in slice order (ReduceSum), rounded once to the output type.
// Not serialized: a graph read from JSON runs its products tile by tile, with
// the same results.
#include "model/ir/types.hpp"

#include <vector>

namespace ipusim::ir {

struct FusedMatMul {
  // The programs of the lowering, in order: they must run as a consecutive
  // run of one Sequence's children (the loader checks; otherwise the product
  // runs tile by tile).
  std::vector<Id> programs;
  // a: aRows x k (stored k x aRows when transposeA), of which the product
  // takes rows [rowOffset, rowOffset + m) (a pass of a product computed in
  // serial passes; all of them otherwise); b: k x n (stored n x k when
  // transposeB); out: m x n. Row-major regions of aRows k, k n and m n elements.
  TensorRef a, b, out;
  std::uint64_t m = 0, k = 0, n = 0;
  std::uint64_t aRows = 0, rowOffset = 0;
  // The k slices the tiles summed apart: [l kSlice, min(k, (l + 1) kSlice)).
  std::uint64_t kSlice = 0;
  bool transposeA = false, transposeB = false;
  DType inputType = DType::Float;   // a and b
  DType outputType = DType::Float;  // out (the partials are float when k is sliced)
};

}  // namespace ipusim::ir
