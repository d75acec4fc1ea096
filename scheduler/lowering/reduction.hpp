#pragma once
// Reductions spread over tiles and workers, in stages as popops reduces:
// no sum runs on one worker of one tile.
//   reduceColumns: out[c] = scale * sum_r in[r][c] (a bias gradient). Each
//     tile owning a range of out gathers its columns of every row (one 2-D
//     region), its workers each sum a group of rows (stage 1), and one
//     vertex sums the groups' partials (stage 2).
//   reduceAll: out[i] = scale * sum in (a loss mean): the elements are
//     gathered to out's tile, each worker folds a chunk (stage 1), one vertex
//     folds the chunks' sums (stage 2).
#include "scheduler/lowering/ir_builder.hpp"

namespace ipusim::scheduler {

// `in`: rows x cols, row-major; `out`: cols elements, already mapped.
void reduceColumns(IrBuilder& builder, ir::Id in, std::uint64_t rows, std::uint64_t cols, ir::Id out, double scale);
// The same sum for a tall `in` (an NHWC gradient's channels over batch x
// positions): first each tile sums the rows it holds (whole rows over its
// workers, pieces of rows added after); groups of about sqrt(tiles) of
// those per-tile sums are folded, each group's columns sliced over its
// tiles; then reduceColumns over the groups' sums. No tile gathers the whole
// tensor, nor a whole group of wide rows.
void reduceColumnsWhereHeld(IrBuilder& builder, ir::Id in, std::uint64_t cols, ir::Id out, double scale);
// `in`: n elements; the sum goes to out[outIndex], already mapped.
void reduceAll(IrBuilder& builder, ir::Id in, std::uint64_t n, ir::Id out, double scale, std::uint64_t outIndex = 0);

}  // namespace ipusim::scheduler
