#pragma once
// MatMulPlan: how one matrix product out (m x n) = op(a) (m x k) . op(b) (k x n)
// is partitioned over tiles, as poplin plans a matmul: the rows (m), columns
// (n) and reduction (k) are split into pm x pn x pk blocks, one block per
// tile; a split of k leaves partial sums that a second compute set reduces.
// Vertices on a block are whole blocks, or single rows / columns where a
// whole block would not be a contiguous region of its tensor (a vertex field
// is one contiguous region). Or, as PopLibs does, 2-D output blocks with the
// reduction whole (pk = 1): each tile's operand blocks are gathered into
// contiguous tile-local buffers by ONE multi-region Copy, one vertex per tile
// (and, when a block is not contiguous in the output, one more Copy of its
// rows into the output, which is spread evenly over the same tiles). The plan with the least estimated cycles wins:
// AMP compute (MatMulPartial::cycles, per-vertex overhead included) + operand
// exchange + partial reduction, among the plans whose blocks fit the tile
// memory budget.
#include "model/target.hpp"

#include <cstdint>
#include <string>

namespace ipusim::scheduler {

struct MatMulShape {
  std::uint64_t m = 0, k = 0, n = 0;
  bool transposeA = false;  // a stored k x m
  bool transposeB = false;  // b stored n x k
  bool aResident = false;   // a has no placement yet: its first copy costs no exchange
  bool bResident = false;
  // Tiles holding a / b now (0: no placement yet; a gathered plan then
  // spreads a over its pm tiles of column block 0, b over its pn tiles of
  // row block 0). Every tile of a row / column block reads the same operand
  // rows: those source tiles send each byte pn (a) / pm (b) times.
  std::uint64_t aSourceTiles = 0, bSourceTiles = 0;
};

struct MatMulPlan {
  std::uint64_t pm = 1, pn = 1, pk = 1;
  bool rowVertices = false;  // one vertex per output row of a block
  bool colVertices = false;  // one vertex per output column of a block
  bool gathered = false;     // pk = 1; operands gathered into per-tile buffers, one vertex per tile
  std::uint64_t estimatedCycles = 0;
  std::uint64_t bytesPerTile = 0;
  bool fits = true;
  std::uint64_t tiles() const { return pm * pn * pk; }
};

// Chooses the plan for `shape` on `tiles` tiles; `memoryBudget` bytes per tile.
MatMulPlan planMatMul(const MatMulShape& shape, const model::Target& target, std::uint32_t tiles,
                      std::uint64_t memoryBudget);

// Is the block rows [r0, r1) x cols [c0, c1) of a rows x cols row-major matrix one contiguous range?
inline bool contiguous(std::uint64_t r0, std::uint64_t r1, std::uint64_t c0, std::uint64_t c1, std::uint64_t cols) {
  return r1 - r0 <= 1 || (c0 == 0 && c1 == cols);
}

}  // namespace ipusim::scheduler
