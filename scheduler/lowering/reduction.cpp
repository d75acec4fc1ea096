#include "scheduler/lowering/reduction.hpp"

#include "model/codelets/typed_codelet.hpp"
#include "scheduler/lowering/copy_estimate.hpp"
#include "scheduler/planning/cost_model.hpp"

#include <algorithm>
#include <tuple>
#include <cmath>

namespace ipusim::scheduler {
namespace {

Params sumParams(std::uint64_t rows, std::uint64_t cols, int axis, double scale) {
  return {{"rows", double(rows)}, {"cols", double(cols)}, {"axis", double(axis)}, {"scale", scale}, {"accumulate", 0}};
}

std::uint32_t workersOf(const IrBuilder& b) { return std::max<std::uint32_t>(1, b.target().tile.workerContexts); }

}  // namespace

void reduceColumns(IrBuilder& builder, ir::Id in, std::uint64_t rows, std::uint64_t cols, ir::Id out, double scale) {
  const Placement outPlacement = builder.placementOf(out);
  const std::uint64_t groups = std::min<std::uint64_t>(workersOf(builder), rows);
  std::vector<std::uint32_t> owners;
  std::vector<std::uint64_t> bufSizes, partialSizes;
  for (const PlacedRange& r : outPlacement) {
    owners.push_back(r.tile);
    bufSizes.push_back(rows * (r.end - r.begin));
    partialSizes.push_back(groups * (r.end - r.begin));
  }
  const ir::DType dtype = builder.tensor(in).dtype, outType = builder.tensor(out).dtype;
  ir::Id buf;
  std::vector<std::uint64_t> bufAt;
  std::tie(buf, bufAt) = builder.addBlocks(builder.tensor(out).name + "/columns", dtype, owners, bufSizes);
  std::vector<ir::CopyRegion> gather;
  for (std::size_t o = 0; o < outPlacement.size(); ++o) {
    const std::uint64_t c0 = outPlacement[o].begin, len = outPlacement[o].end - c0;
    if (len == cols) gather.push_back({{in, 0, rows * cols}, {buf, bufAt[o], bufAt[o] + rows * cols}});
    else gather.push_back({{in, c0, c0 + len}, {buf, bufAt[o], bufAt[o] + len}, rows, cols, len});
  }
  // Each owner receives its columns of every row; each holder of `in` sends its share once.
  std::uint64_t busiest = 0;
  for (std::uint64_t size : bufSizes) busiest = std::max(busiest, size);
  for (const PlacedRange& r : builder.placementOf(in)) busiest = std::max(busiest, r.end - r.begin);
  builder.copy(std::move(gather), "gather_columns", exchangePhaseCycles(busiest * ir::sizeOf(dtype), builder.target()));

  if (groups <= 1) {
    std::vector<ir::Vertex> v;
    for (std::size_t o = 0; o < outPlacement.size(); ++o) {
      const std::uint64_t len = outPlacement[o].end - outPlacement[o].begin;
      v.push_back({model::typedCodeletName("ReduceSum", {dtype, outType}), owners[o], {{"in", {buf, bufAt[o], bufAt[o] + rows * len}},
                                            {"out", {out, outPlacement[o].begin, outPlacement[o].end}}},
                   sumParams(rows, len, 0, scale)});
    }
    builder.execute(std::move(v), "reduce");
    return;
  }
  ir::Id partials;
  std::vector<std::uint64_t> pAt;
  std::tie(partials, pAt) = builder.addBlocks(builder.tensor(out).name + "/row_group_sums", ir::DType::Float,
                                              owners, partialSizes);
  std::vector<ir::Vertex> stage1, stage2;
  for (std::size_t o = 0; o < outPlacement.size(); ++o) {
    const std::uint64_t len = outPlacement[o].end - outPlacement[o].begin;
    for (std::uint64_t g = 0; g < groups; ++g) {
      const std::uint64_t r0 = rows * g / groups, r1 = rows * (g + 1) / groups;
      stage1.push_back({model::typedCodeletName("ReduceSum", {dtype, ir::DType::Float}), owners[o],
                        {{"in", {buf, bufAt[o] + r0 * len, bufAt[o] + r1 * len}},
                         {"out", {partials, pAt[o] + g * len, pAt[o] + (g + 1) * len}}},
                        sumParams(r1 - r0, len, 0, 1)});
    }
    stage2.push_back({model::typedCodeletName("ReduceSum", {ir::DType::Float, outType}), owners[o], {{"in", {partials, pAt[o], pAt[o] + groups * len}},
                                               {"out", {out, outPlacement[o].begin, outPlacement[o].end}}},
                      sumParams(groups, len, 0, scale)});
  }
  builder.execute(std::move(stage1), "reduce_rows");
  builder.execute(std::move(stage2), "reduce_groups");
}

void reduceColumnsWhereHeld(IrBuilder& builder, ir::Id in, std::uint64_t cols, ir::Id out, double scale) {
  const ir::DType dtype = builder.tensor(in).dtype;
  const std::string sumToFloat = model::typedCodeletName("ReduceSum", {dtype, ir::DType::Float});
  // Stage 0, per range of `in` held by a tile: its whole rows summed into a
  // partial row of its own, the piece of a row before them (head) and after
  // them (tail) added to it.
  const Placement held = builder.placementOf(in);
  std::vector<std::uint32_t> rowTiles;
  for (const PlacedRange& r : held) rowTiles.push_back(r.tile);
  ir::Id partials;
  std::vector<std::uint64_t> pAt;
  std::tie(partials, pAt) = builder.addBlocks(builder.tensor(out).name + "/tile_sums", ir::DType::Float, rowTiles,
                                              std::vector<std::uint64_t>(rowTiles.size(), cols));
  std::vector<ir::Vertex> wholeRows, heads, tails;
  for (std::size_t i = 0; i < held.size(); ++i) {
    const PlacedRange& r = held[i];
    const std::uint64_t at = pAt[i];
    const std::uint64_t firstRow = ceilDiv(r.begin, cols), endRow = std::max(firstRow, r.end / cols);
    if (endRow == firstRow)
      wholeRows.push_back({model::typedCodeletName("Fill", {ir::DType::Float}), r.tile, {{"out", {partials, at, at + cols}}}, {{"value", 0}}});
    else
      wholeRows.push_back({sumToFloat, r.tile, {{"in", {in, firstRow * cols, endRow * cols}}, {"out", {partials, at, at + cols}}},
                           sumParams(endRow - firstRow, cols, 0, 1)});
    auto piece = [&](std::uint64_t b, std::uint64_t e, std::vector<ir::Vertex>& into) {
      if (b >= e) return;
      Params p = sumParams(1, e - b, 0, 1);
      p["accumulate"] = 1;
      into.push_back({sumToFloat, r.tile, {{"in", {in, b, e}}, {"out", {partials, at + b % cols, at + b % cols + (e - b)}}}, p});
    };
    if (endRow == firstRow && r.begin / cols == (r.end - 1) / cols) {
      piece(r.begin, r.end, heads);  // within one row
    } else {
      piece(r.begin, std::min(r.end, firstRow * cols), heads);
      piece(std::max(r.begin, endRow * cols), r.end, tails);
    }
  }
  builder.execute(std::move(wholeRows), "reduce_tile_rows");
  if (!heads.empty()) builder.execute(std::move(heads), "reduce_tile_head");
  if (!tails.empty()) builder.execute(std::move(tails), "reduce_tile_tail");
  // Stage 1: groups of about sqrt(rows) consecutive partial rows, each
  // group's columns cut into slices over the group's tiles (slice j of group
  // k summed on the tile of its j-th row), so no tile gathers a whole group
  // of wide rows; then the column sums of the groups' sums.
  const std::uint64_t rows = rowTiles.size();
  const std::uint64_t group = std::max<std::uint64_t>(2, std::uint64_t(std::ceil(std::sqrt(double(rows)))));
  if (rows <= group) {
    reduceColumns(builder, partials, rows, cols, out, scale);
    return;
  }
  const std::uint64_t groups = ceilDiv(rows, group);
  // Slices of at least kSliceGrain columns (a few vectors: a fold vertex's
  // overhead is then spread over its loop).
  constexpr std::uint64_t kSliceGrain = 8;
  struct Slice { std::uint64_t group, firstRow, rows, col, len; std::uint32_t tile; };
  std::vector<Slice> slices;
  for (std::uint64_t k = 0; k < groups; ++k) {
    const std::uint64_t first = k * group, n = std::min(rows, first + group) - first;
    const std::uint64_t count = std::max<std::uint64_t>(1, std::min(n, cols / kSliceGrain));
    const std::uint64_t len = ceilDiv(cols, count);
    for (std::uint64_t j = 0, col = 0; col < cols; ++j, col += len)
      slices.push_back({k, first, n, col, std::min(len, cols - col), rowTiles[first + j]});
  }
  std::vector<std::uint32_t> sliceTiles;
  std::vector<std::uint64_t> gatheredSizes, foldedSizes;
  for (const Slice& sl : slices) {
    sliceTiles.push_back(sl.tile);
    gatheredSizes.push_back(sl.rows * sl.len);
    foldedSizes.push_back(sl.len);
  }
  ir::Id gathered;
  std::vector<std::uint64_t> gAt;
  std::tie(gathered, gAt) =
      builder.addBlocks(builder.tensor(out).name + "/tile_sums_gathered", ir::DType::Float, sliceTiles, gatheredSizes);
  // The groups' sums, groups x cols row-major: slice (k, j) holds row k's columns [col, col + len).
  ir::Id folded;
  std::vector<std::uint64_t> fAt;
  std::tie(folded, fAt) =
      builder.addBlocks(builder.tensor(out).name + "/group_sums", ir::DType::Float, sliceTiles, foldedSizes);
  std::vector<ir::CopyRegion> bring;
  std::vector<ir::Vertex> fold;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const Slice& sl = slices[i];
    // The slice's columns of the group's partial rows (partials is rows x cols, row r at pAt[r] = r cols).
    ir::CopyRegion region{{partials, pAt[sl.firstRow] + sl.col, pAt[sl.firstRow] + sl.col + sl.len},
                          {gathered, gAt[i], gAt[i] + sl.len}};
    region.rows = sl.rows;
    if (sl.rows > 1) region.srcStride = cols, region.dstStride = sl.len;
    bring.push_back(region);
    fold.push_back({"ReduceSum", sl.tile, {{"in", {gathered, gAt[i], gAt[i] + sl.rows * sl.len}}, {"out", {folded, fAt[i], fAt[i] + sl.len}}},
                    sumParams(sl.rows, sl.len, 0, 1)});
  }
  const ir::Cycles estimate = estimateCopy(builder, bring);
  builder.copy(std::move(bring), "gather_tile_sums", estimate);
  builder.execute(std::move(fold), "reduce_tile_sums");
  reduceColumns(builder, folded, groups, cols, out, scale);
}

void reduceAll(IrBuilder& builder, ir::Id in, std::uint64_t n, ir::Id out, double scale, std::uint64_t outIndex) {
  const std::uint32_t tile = builder.placementOf(out).at(0).tile;  // relative to the op's shard
  const ir::DType dtype = builder.tensor(in).dtype;
  const ir::Id buf = builder.addTensor(builder.tensor(out).name + "/elements", {n}, dtype, "temporaries", false,
                                       onTile(n, tile));
  std::vector<ir::CopyRegion> gather{{{in, 0, n}, {buf, 0, n}}};
  const ir::Cycles estimate = estimateCopy(builder, gather);
  builder.copy(std::move(gather), "gather_elements", estimate);
  const std::uint64_t chunks = std::min<std::uint64_t>(workersOf(builder), std::max<std::uint64_t>(1, n / 2));
  if (chunks <= 1) {
    builder.execute({{"ReduceSum", tile, {{"in", {buf, 0, n}}, {"out", {out, outIndex, outIndex + 1}}}, sumParams(1, n, 1, scale)}},
                    "reduce");
    return;
  }
  const ir::Id sums = builder.addTensor(builder.tensor(out).name + "/chunk_sums", {chunks}, ir::DType::Float,
                                        "temporaries", false, onTile(chunks, tile));
  std::vector<ir::Vertex> stage1;
  for (std::uint64_t c = 0; c < chunks; ++c) {
    const std::uint64_t b = n * c / chunks, e = n * (c + 1) / chunks;
    stage1.push_back({"ReduceSum", tile, {{"in", {buf, b, e}}, {"out", {sums, c, c + 1}}}, sumParams(1, e - b, 1, 1)});
  }
  builder.execute(std::move(stage1), "reduce_chunks");
  builder.execute({{"ReduceSum", tile, {{"in", {sums, 0, chunks}}, {"out", {out, outIndex, outIndex + 1}}}, sumParams(1, chunks, 1, scale)}},
                  "reduce_sums");
}

}  // namespace ipusim::scheduler
