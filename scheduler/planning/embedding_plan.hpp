#pragma once
// The embedding's plan, as popops plans multiSlice and multiUpdateAdd
// (popops::embedding::plan): the table of `rows` (the vocabulary) x `cols`
// (output_dim) values is cut into a grid of row blocks x column blocks, one
// block per tile. A lookup broadcasts the ids to the grid; each tile slices
// the rows it owns into a partial of its columns (MultiSlice); with several
// row blocks the partials (zero where a tile owns no row) are summed into
// the output. The update gives each tile its columns of the rows' gradient
// and adds them into its block of the table's gradient (MultiUpdateAdd).
//
// The table is stored column block by column block (models/embedding_layout.hpp),
// so that any block is one contiguous range.
#include "model/ir/types.hpp"
#include "scheduler/models/embedding_layout.hpp"
#include "model/target.hpp"
#include "scheduler/planning/tile_placement.hpp"

#include <cstdint>
#include <string>

namespace ipusim::scheduler {

struct EmbeddingPlan {
  std::uint64_t rows = 0, cols = 0, lookups = 0;
  std::uint64_t grain = 0, columnBlocks = 0;  // cols = columnBlocks x grain
  std::uint64_t rowBlocks = 1;
  std::uint64_t rowsPerBlock = 0;  // ceil(rows / rowBlocks); the last block may hold fewer
  std::uint32_t tiles = 0;         // the tiles the op may use
  ir::Cycles lookupCycles = 0, updateCycles = 0;  // the planner's estimates
  std::uint64_t bytesPerTile = 0;                  // the busiest tile's, during either

  std::uint64_t blockRowBegin(std::uint64_t r) const { return std::min(rows, r * rowsPerBlock); }
  std::uint64_t blockRowEnd(std::uint64_t r) const { return std::min(rows, (r + 1) * rowsPerBlock); }
  // The tile of block (r, c), relative to the op's first tile.
  std::uint32_t tileOf(std::uint64_t r, std::uint64_t c) const { return std::uint32_t((c * rowBlocks + r) % tiles); }
  // The table's (and its gradient's) placement: each block one range.
  Placement tablePlacement() const;
};

// The MultiSlice codelet slicing a table of `valueType` into partials of
// `partialType` (float when summed over row blocks).
std::string multiSliceCodelet(ir::DType valueType, ir::DType partialType);

// The cheapest grid whose busiest tile holds at most `bytesPerTile` (else the
// one needing the least), for `lookups` ids into a table of `valueType`.
EmbeddingPlan planEmbedding(std::uint64_t rows, std::uint64_t cols, std::uint64_t lookups, ir::DType valueType,
                            const model::Target& target, std::uint32_t tiles, std::uint64_t bytesPerTile);

}  // namespace ipusim::scheduler
