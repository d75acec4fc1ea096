#pragma once
// The matmul planner, shaped like poplin's: a plan partitions one product
//   out (m x n) = op(a) (m x k) . op(b) (k x n)
// over the tiles of an IPU as pm x pk x pn blocks, one block per tile (tile
// ((i pn + j) pk + l) computes the partial a[i, l] . b[l, j]). A grouped
// product (a batched matmul: `groups` independent products of that shape, as
// poplin plans grouped matmuls) also deals its groups over the tiles, in pg
// blocks: tile (((g pm + i) pn + j) pk + l) computes block [i, j, l] of each
// group of group block g, one MatMulPartial per group. Its cost is a
// pure function of the plan, phase by phase, by the machine model's own rules
// (cost_model.hpp):
//   1. gather: one exchange brings every tile its operand blocks; the
//      busiest tile receives its two blocks or sends its share of a (to pn
//      tiles) and of b (to pm tiles);
//   2. compute: one MatMulPartial (AMP) per tile, partials in float;
//   3. with pk > 1, reduce: one exchange brings each output element's pk
//      partials to the tile that owns it (the output is mapped linearly),
//      then ReduceSum vertices over all six workers; with pk = 1, one
//      exchange places the blocks into the output.
// Temporary memory per tile is the operand blocks and partials (gather and
// compute), then partials and reduction buffers (reduce); a plan fits when
// that is within the budget (ipu.available_memory_proportion x tile memory,
// as poplin's availableMemoryProportion bounds a matmul's temporaries).
// planMatMul() searches every partition (each dimension split into any
// number of equal blocks, pm pk pn <= tiles) and keeps the fastest plan that
// fits; when none fits in one pass, it tries 2, 3, ... serial passes over
// the rows (the fewest passes that fit; the smallest plan if none does).
// Plans are cached by shape.
#include "model/ir/types.hpp"
#include "model/target.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::scheduler {

struct MatMulShape {
  std::uint64_t m = 0, k = 0, n = 0;
  bool transposeA = false;  // a stored k x m
  bool transposeB = false;  // b stored n x k
  ir::DType inputType = ir::DType::Float;   // a and b
  ir::DType outputType = ir::DType::Float;
  // Tiles a, b and the output are spread over (their mappings are linear):
  // the gather's senders hold m k / aTiles and k n / bTiles elements each.
  std::uint64_t aTiles = 1, bTiles = 1, outTiles = 1;
  // Independent products (a [groups, m, k], b [groups, k, n], out [groups,
  // m, n], each group's blocks as above); serial passes only for one group.
  std::uint64_t groups = 1;
  bool operator==(const MatMulShape& o) const;
};

struct MatMulCost {  // cycles of each phase, its sync or latency included
  ir::Cycles gather = 0, compute = 0, reduceExchange = 0, reduce = 0;
  std::uint64_t temporaryBytesPerTile = 0;
  ir::Cycles total() const { return gather + compute + reduceExchange + reduce; }
};

struct MatMulPlan {
  std::uint64_t pm = 1, pk = 1, pn = 1;
  std::uint64_t pg = 1;  // blocks of groups (a grouped product's)
  // Serial passes over the output's rows, each a product of ceil(m / serial)
  // rows partitioned pm x pk x pn, its result placed into the output (as
  // poplin's serial splits trade time for temporary memory).
  std::uint64_t serial = 1;
  MatMulCost cost;
  bool fits = true;
  std::uint64_t tiles() const { return pg * pm * pk * pn; }
};

// One matmul of a compiled step and the plan it got (the compile report).
struct PlannedMatMul {
  std::string op;  // "<layer>/<op>"
  std::uint64_t m = 0, k = 0, n = 0, groups = 1;
  double macs = 0;
  MatMulPlan plan;
};

// The cost of partition (pm, pk, pn) of `shape` on `target`, in `serial`
// passes (each pass's cost times the passes; the partition applies to one
// pass), its groups in `pg` blocks.
MatMulCost estimateMatMul(const MatMulShape& shape, std::uint64_t pm, std::uint64_t pk, std::uint64_t pn,
                          const model::Target& target, std::uint64_t serial = 1, std::uint64_t pg = 1);

// Every partition the planner considers in `serial` passes, costed, with
// `fits` against `budget` bytes per tile.
std::vector<MatMulPlan> matMulPlanSpace(const MatMulShape& shape, const model::Target& target, std::uint32_t tiles,
                                        std::uint64_t budget, std::uint64_t serial = 1);

// The fastest plan of the space that fits the budget; when none fits, the
// one with the fewest temporary bytes per tile (fits = false).
MatMulPlan planMatMul(const MatMulShape& shape, const model::Target& target, std::uint32_t tiles,
                      std::uint64_t budget);

// The number of blocks a dimension of `d` can be split into: every p whose
// blocks ceil(d / p) differ from those of p - 1 (all block sizes), up to `limit`.
std::vector<std::uint64_t> blockCounts(std::uint64_t d, std::uint64_t limit);

}  // namespace ipusim::scheduler
