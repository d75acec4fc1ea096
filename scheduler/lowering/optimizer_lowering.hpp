#pragma once
// The lowering of the optimizer's reductions and clipping (the ops of
// scheduler/graph/gradient_clipping.hpp), spread over the tiles holding the
// gradients, as popops reduces:
//   sumOfSquares: out[0] = sum over every input of its elements squared.
//     Each tile's workers square-and-sum their chunks of what it holds
//     (ReduceSquareAdd), the tile folds its chunks (ReduceSum), and the
//     tiles' sums are gathered and folded where `out` lies (reduceAll).
//   clipByNorm: the squared norm is copied to every tile holding an input
//     (one exchange), then each worker chunk is scaled where it lies
//     (ClipByNorm), into outputs mapped as the inputs.
#include "scheduler/lowering/ir_builder.hpp"

#include <array>
#include <vector>

namespace ipusim::scheduler {

// `out`: one float element, already mapped.
void sumOfSquares(IrBuilder& builder, const std::vector<ir::Id>& ins, ir::Id out);
// out[outIndex] = sum_i l1_i sum|ins[i]| + l2_i sum ins[i]^2 (coefficients[i]
// = {l1_i, l2_i}: the regularizers' penalties), staged as sumOfSquares is,
// each chunk's penalty by a ReducePenalty vertex.
void sumOfPenalties(IrBuilder& builder, const std::vector<ir::Id>& ins,
                    const std::vector<std::array<double, 2>>& coefficients, ir::Id out, std::uint64_t outIndex);
// `outs[i]`: mapped as ins[i]; `normSquared`: one float element; `global`
// picks Keras's clip_by_global_norm formula (else its per-tensor _clip_by_norm).
void clipByNorm(IrBuilder& builder, const std::vector<ir::Id>& ins, ir::Id normSquared, const std::vector<ir::Id>& outs,
                double clipNorm, bool global);

}  // namespace ipusim::scheduler
