#include "scheduler/lowering/embedding_lowering.hpp"

#include "model/codelets/typed_codelet.hpp"
#include "scheduler/lowering/partials.hpp"
#include "scheduler/lowering/copy_estimate.hpp"
#include "scheduler/planning/cost_model.hpp"

#include <map>
#include <tuple>

namespace ipusim::scheduler {
namespace {

struct Block {
  std::uint64_t r, c;
  std::uint32_t tile;
  std::uint64_t begin, end;  // in the table: rows [rowBegin, rowEnd) of column block c
  std::uint64_t rowBegin, rowEnd;
};

std::vector<Block> blocksOf(const EmbeddingPlan& p) {
  std::vector<Block> blocks;
  for (std::uint64_t c = 0; c < p.columnBlocks; ++c)
    for (std::uint64_t r = 0; r < p.rowBlocks; ++r) {
      const std::uint64_t v0 = p.blockRowBegin(r), v1 = p.blockRowEnd(r);
      if (v1 > v0) blocks.push_back({r, c, p.tileOf(r, c), (c * p.rows + v0) * p.grain, (c * p.rows + v1) * p.grain, v0, v1});
    }
  return blocks;
}

// The ids copied once to every tile holding a block: the regions, and the
// buffer's first element per tile.
std::map<std::uint32_t, std::uint64_t> broadcastIds(IrBuilder& b, const std::vector<Block>& blocks, ir::Id ids,
                                                     std::uint64_t n, const std::string& name,
                                                     std::vector<ir::CopyRegion>& regions, ir::Id& buffer) {
  std::vector<std::uint32_t> tiles;
  for (const Block& blk : blocks)
    if (std::find(tiles.begin(), tiles.end(), blk.tile) == tiles.end()) tiles.push_back(blk.tile);
  const auto [buf, at] = b.addBlocks(name + "/ids", ir::DType::Int, tiles, std::vector<std::uint64_t>(tiles.size(), n));
  std::map<std::uint32_t, std::uint64_t> where;
  for (std::size_t t = 0; t < tiles.size(); ++t) {
    where[tiles[t]] = at[t];
    regions.push_back({{ids, 0, n}, {buf, at[t], at[t] + n}});
  }
  buffer = buf;
  return where;
}

// Fill vertices zeroing [begin, end) of `tensor` on `tile`, one per worker.
void zero(std::vector<ir::Vertex>& v, const std::string& codelet, ir::Id tensor, std::uint32_t tile, std::uint64_t begin,
          std::uint64_t end, std::uint32_t workers) {
  const std::uint64_t chunk = std::max<std::uint64_t>(1, ceilDiv(end - begin, workers));
  for (std::uint64_t e = begin; e < end; e += chunk)
    v.push_back({codelet, tile, {{"out", {tensor, e, std::min(end, e + chunk)}}}, {{"value", 0.0}}});
}

}  // namespace

void lowerEmbeddingLookup(IrBuilder& b, const EmbeddingPlan& p, ir::Id ids, ir::Id table, ir::Id out,
                          ir::DType valueType, const std::string& name) {
  const std::vector<Block> blocks = blocksOf(p);
  const std::uint32_t workers = std::max<std::uint32_t>(1, b.target().tile.workerContexts);
  const std::uint64_t n = p.lookups, partialBlock = n * p.grain;
  std::vector<ir::CopyRegion> regions;
  ir::Id idsBuf = ir::kNoId;
  const auto idsAt = broadcastIds(b, blocks, ids, n, name, regions, idsBuf);
  b.copy(regions, "broadcast_ids", estimateCopy(b, regions));

  // The partials: block (r, c)'s at ((c R + r) n) grain, so that a column
  // block's row blocks follow one another n grain apart.
  const ir::DType partialType = p.rowBlocks > 1 ? ir::DType::Float : valueType;
  Placement partialPlacement;
  for (const Block& blk : blocks) {
    const std::uint64_t first = (blk.c * p.rowBlocks + blk.r) * partialBlock;
    partialPlacement.push_back({first, first + partialBlock, blk.tile});
  }
  const ir::Id partials = b.addTensor(name + "/block_partials", {p.columnBlocks * p.rowBlocks * partialBlock},
                                      partialType, "temporaries", false, partialPlacement);
  if (p.rowBlocks > 1) {  // a tile writes only the rows it owns: the others must read 0 in the sum
    std::vector<ir::Vertex> fill;
    for (const PlacedRange& r : partialPlacement) zero(fill, "Fill", partials, r.tile, r.begin, r.end, workers);
    b.execute(std::move(fill), "zero_partials");
  }
  std::vector<ir::Vertex> slices;
  const std::string codelet = multiSliceCodelet(valueType, partialType);
  const std::uint64_t chunk = std::max<std::uint64_t>(1, ceilDiv(n, workers));
  for (const Block& blk : blocks) {
    const std::uint64_t first = (blk.c * p.rowBlocks + blk.r) * partialBlock, at = idsAt.at(blk.tile);
    for (std::uint64_t i0 = 0; i0 < n; i0 += chunk) {
      const std::uint64_t i1 = std::min(n, i0 + chunk);
      slices.push_back({codelet, blk.tile,
                        {{"offsets", {idsBuf, at + i0, at + i1}},
                         {"baseT", {table, blk.begin, blk.end}},
                         {"subT", {partials, first + i0 * p.grain, first + i1 * p.grain}}},
                        {{"n", double(i1 - i0)}, {"rows", double(blk.rowEnd - blk.rowBegin)}, {"cols", double(p.grain)},
                         {"rowBegin", double(blk.rowBegin)}, {"totalRows", double(p.rows)}}});
    }
  }
  b.execute(std::move(slices), "slice");

  // Output element (i, c grain + j) is in column block c's partials, row block r's n grain further on.
  const std::uint64_t cols = p.cols, grain = p.grain, rowBlocks = p.rowBlocks;
  placeOrReducePartials(
      b, partials, out, valueType, p.rowBlocks,
      [=](std::uint64_t e) {
        const std::uint64_t i = e / cols, col = e % cols, c = col / grain, j = col % grain;
        return PartialLocation{(c * rowBlocks * n + i) * grain + j, n * grain, e - j + grain};
      },
      name, std::nullopt);
}

void lowerEmbeddingUpdate(IrBuilder& b, const EmbeddingPlan& p, ir::Id ids, ir::Id rowsGrad, ir::Id tableGrad,
                          ir::DType valueType, const std::string& name) {
  const std::vector<Block> blocks = blocksOf(p);
  const std::uint32_t workers = std::max<std::uint32_t>(1, b.target().tile.workerContexts);
  const std::uint64_t n = p.lookups;
  std::vector<ir::CopyRegion> regions;
  ir::Id idsBuf = ir::kNoId;
  const auto idsAt = broadcastIds(b, blocks, ids, n, name, regions, idsBuf);
  // Each block's columns of every row of the gradient.
  std::vector<std::uint32_t> tiles;
  for (const Block& blk : blocks) tiles.push_back(blk.tile);
  ir::Id columns;
  std::vector<std::uint64_t> columnsAt;
  std::tie(columns, columnsAt) =
      b.addBlocks(name + "/gradient_columns", valueType, tiles, std::vector<std::uint64_t>(blocks.size(), n * p.grain));
  for (std::size_t k = 0; k < blocks.size(); ++k)
    regions.push_back(stridedBlock(rowsGrad, blocks[k].c * p.grain, n, p.grain, p.cols, columns, columnsAt[k]));
  b.copy(regions, "gather_columns", estimateCopy(b, regions));

  std::vector<ir::Vertex> fill;
  for (const Block& blk : blocks)
    zero(fill, model::typedCodeletName("Fill", {valueType}), tableGrad, blk.tile, blk.begin, blk.end, workers);
  b.execute(std::move(fill), "zero_gradient");
  std::vector<ir::Vertex> updates;
  const std::string codelet = model::typedCodeletName("MultiUpdateAdd", {valueType});
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const Block& blk = blocks[k];
    const std::uint64_t at = idsAt.at(blk.tile);
    updates.push_back({codelet, blk.tile,
                       {{"offsets", {idsBuf, at, at + n}},
                        {"baseT", {tableGrad, blk.begin, blk.end}},
                        {"subT", {columns, columnsAt[k], columnsAt[k] + n * p.grain}}},
                       {{"n", double(n)}, {"rows", double(blk.rowEnd - blk.rowBegin)}, {"cols", double(p.grain)},
                        {"rowBegin", double(blk.rowBegin)}, {"totalRows", double(p.rows)}, {"scale", 1.0}}});
  }
  b.execute(std::move(updates), "update_add");
}

}  // namespace ipusim::scheduler
