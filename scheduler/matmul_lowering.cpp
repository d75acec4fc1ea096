#include "scheduler/matmul_lowering.hpp"

#include "model/codelets/typed_codelet.hpp"
#include "scheduler/cost_model.hpp"
#include "scheduler/reduction.hpp"
#include "scheduler/tile_mapper.hpp"

#include <algorithm>

namespace ipusim::scheduler {
namespace {

// `rows` rows of `len` elements, `srcStride` apart in src, packed in dst:
// one region (a 1-D one when the rows are contiguous).
ir::CopyRegion block(ir::Id src, std::uint64_t srcFirst, std::uint64_t rows, std::uint64_t len,
                     std::uint64_t srcStride, ir::Id dst, std::uint64_t dstFirst) {
  if (rows == 1 || len == srcStride)
    return {{src, srcFirst, srcFirst + rows * len}, {dst, dstFirst, dstFirst + rows * len}};
  return {{src, srcFirst, srcFirst + len}, {dst, dstFirst, dstFirst + len}, rows, srcStride, len};
}

struct Blocks {  // a dimension of d cut into p blocks of ceil(d / p)
  std::uint64_t d, size;
  std::uint64_t begin(std::uint64_t i) const { return i * size; }
  std::uint64_t length(std::uint64_t i) const { return std::min(d, (i + 1) * size) - i * size; }
};

}  // namespace

// One pass: rows [rowOffset, rowOffset + s.m) of a product whose a has
// `fullM` logical rows, into `t.out` (s.m x s.n).
void lowerPass(IrBuilder& builder, const MatMulShape& s, const MatMulPlan& plan, const MatMulTensors& t,
               std::uint64_t rowOffset, std::uint64_t fullM, const std::string& name) {
  const Blocks M{s.m, ceilDiv(s.m, plan.pm)}, K{s.k, ceilDiv(s.k, plan.pk)}, N{s.n, ceilDiv(s.n, plan.pn)};
  const std::uint64_t tiles = plan.tiles();
  auto tileOf = [&](std::uint64_t i, std::uint64_t j, std::uint64_t l) { return std::uint32_t((i * plan.pn + j) * plan.pk + l); };

  // Per-tile operand buffers and partials, in tile order.
  std::vector<std::uint32_t> tileIds(tiles);
  std::vector<std::uint64_t> aSizes(tiles), bSizes(tiles), pSizes(tiles);
  for (std::uint64_t i = 0; i < plan.pm; ++i)
    for (std::uint64_t j = 0; j < plan.pn; ++j)
      for (std::uint64_t l = 0; l < plan.pk; ++l) {
        const std::uint32_t tile = tileOf(i, j, l);
        tileIds[tile] = tile;
        aSizes[tile] = M.length(i) * K.length(l);
        bSizes[tile] = K.length(l) * N.length(j);
        pSizes[tile] = M.length(i) * N.length(j);
      }
  const auto [aBuf, aAt] = builder.addBlocks(name + "/a_blocks", s.inputType, tileIds, aSizes);
  const auto [bBuf, bAt] = builder.addBlocks(name + "/b_blocks", s.inputType, tileIds, bSizes);
  // Partials in float (PopLibs' default) unless one pass writes a half output directly.
  const ir::DType partialsType = plan.pk > 1 ? ir::DType::Float : s.outputType;
  const auto [partials, pAt] = builder.addBlocks(name + "/partials", partialsType, tileIds, pSizes);

  // 1. Gather each tile's blocks as stored (the vertex reads them transposed).
  std::vector<ir::CopyRegion> gather;
  gather.reserve(2 * tiles);
  for (std::uint64_t i = 0; i < plan.pm; ++i)
    for (std::uint64_t j = 0; j < plan.pn; ++j)
      for (std::uint64_t l = 0; l < plan.pk; ++l) {
        const std::uint32_t tile = tileOf(i, j, l);
        const std::uint64_t m0 = M.begin(i), mb = M.length(i), k0 = K.begin(l), kb = K.length(l);
        const std::uint64_t n0 = N.begin(j), nb = N.length(j);
        gather.push_back(s.transposeA ? block(t.a, k0 * fullM + rowOffset + m0, kb, mb, fullM, aBuf, aAt[tile])
                                      : block(t.a, (rowOffset + m0) * s.k + k0, mb, kb, s.k, aBuf, aAt[tile]));
        gather.push_back(s.transposeB ? block(t.b, n0 * s.k + k0, nb, kb, s.k, bBuf, bAt[tile])
                                      : block(t.b, k0 * s.n + n0, kb, nb, s.n, bBuf, bAt[tile]));
      }
  builder.copy(std::move(gather), "gather_operands", plan.cost.gather);

  // 2. The AMP: one MatMulPartial per tile.
  std::vector<ir::Vertex> amp;
  amp.reserve(tiles);
  for (std::uint64_t i = 0; i < plan.pm; ++i)
    for (std::uint64_t j = 0; j < plan.pn; ++j)
      for (std::uint64_t l = 0; l < plan.pk; ++l) {
        const std::uint32_t tile = tileOf(i, j, l);
        amp.push_back({model::typedCodeletName("MatMulPartial", {s.inputType, partialsType}), tile,
                       {{"a", {aBuf, aAt[tile], aAt[tile] + aSizes[tile]}},
                        {"b", {bBuf, bAt[tile], bAt[tile] + bSizes[tile]}},
                        {"out", {partials, pAt[tile], pAt[tile] + pSizes[tile]}}},
                       {{"m", double(M.length(i))}, {"k", double(K.length(l))}, {"n", double(N.length(j))},
                        {"transposeA", double(s.transposeA)}, {"transposeB", double(s.transposeB)},
                        {"accumulate", 0}}});
      }
  builder.execute(std::move(amp), "");

  // 3. The output's owners take their elements: pieces contiguous both in
  // the output and in a partial block, cut into chunks for the workers.
  struct Chunk { std::uint32_t owner; std::uint64_t out, len, partial, stride; };
  std::vector<Chunk> chunks;
  const std::uint32_t workers = std::max<std::uint32_t>(1, builder.target().tile.workerContexts);
  for (const PlacedRange& r : builder.placementOf(t.out)) {
    const std::uint64_t owned = r.end - r.begin;
    const std::uint64_t chunkLength = std::max<std::uint64_t>(1, ceilDiv(owned, workers));
    for (std::uint64_t e = r.begin; e < r.end;) {
      const std::uint64_t row = e / s.n, col = e % s.n, i = row / M.size, j = col / N.size;
      const std::uint64_t nb = N.length(j);
      const std::uint64_t offset = (row - M.begin(i)) * nb + (col - N.begin(j));
      // A whole-width block continues on the next row; otherwise the piece ends with the block's columns.
      const std::uint64_t pieceEnd = plan.pn == 1 ? std::min(r.end, (M.begin(i) + M.length(i)) * s.n)
                                                  : std::min(r.end, row * s.n + N.begin(j) + nb);
      for (std::uint64_t c = e; c < pieceEnd; c += chunkLength) {
        const std::uint64_t len = std::min(chunkLength, pieceEnd - c);
        chunks.push_back({r.tile, c, len, pAt[tileOf(i, j, 0)] + offset + (c - e), M.length(i) * nb});
      }
      e = pieceEnd;
    }
  }
  if (plan.pk == 1) {
    std::vector<ir::CopyRegion> place;
    place.reserve(chunks.size());
    for (const Chunk& c : chunks)
      place.push_back({{partials, c.partial, c.partial + c.len}, {t.out, c.out, c.out + c.len}});
    builder.copy(std::move(place), "place_output", plan.cost.reduceExchange);
    return;
  }
  // pk partials of a chunk: the same offset in the blocks of tiles l = 0..pk-1,
  // which are consecutive in `partials` (stride: one block).
  std::vector<std::uint32_t> owners;
  std::vector<std::uint64_t> sizes;
  for (const Chunk& c : chunks) {
    if (owners.empty() || owners.back() != c.owner) owners.push_back(c.owner), sizes.push_back(0);
    sizes.back() += plan.pk * c.len;
  }
  const auto [gathered, gAt] = builder.addBlocks(name + "/partials_gathered", ir::DType::Float, owners, sizes);
  std::vector<ir::CopyRegion> bring;
  std::vector<ir::Vertex> reduce;
  bring.reserve(chunks.size());
  reduce.reserve(chunks.size());
  std::size_t owner = 0;
  std::uint64_t at = gAt[0];
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const Chunk& ch = chunks[c];
    if (ch.owner != owners[owner]) at = gAt[++owner];
    bring.push_back({{partials, ch.partial, ch.partial + ch.len}, {gathered, at, at + ch.len}, plan.pk, ch.stride, ch.len});
    reduce.push_back({model::typedCodeletName("ReduceSum", {ir::DType::Float, s.outputType}), ch.owner,
                      {{"in", {gathered, at, at + plan.pk * ch.len}}, {"out", {t.out, ch.out, ch.out + ch.len}}},
                      {{"rows", double(plan.pk)}, {"cols", double(ch.len)}, {"axis", 0}, {"scale", 1}, {"accumulate", 0}}});
    at += plan.pk * ch.len;
  }
  builder.copy(std::move(bring), "gather_partials", plan.cost.reduceExchange);
  builder.execute(std::move(reduce), "reduce");
}

void lowerMatMul(IrBuilder& builder, const MatMulShape& s, const MatMulPlan& plan, const MatMulTensors& t,
                 const std::string& name) {
  if (plan.serial <= 1) {
    lowerPass(builder, s, plan, t, 0, s.m, name);
    return;
  }
  // Serial passes over the rows: each computes its rows into a temporary
  // spread over the tiles (so its reduction uses them all), then places
  // them into the output's rows.
  const std::uint64_t rowsPerPass = ceilDiv(s.m, plan.serial);
  for (std::uint64_t r0 = 0; r0 < s.m; r0 += rowsPerPass) {
    const std::uint64_t rows = std::min(rowsPerPass, s.m - r0);
    MatMulShape pass = s;
    pass.m = rows;
    const std::string passName = name + "/rows_" + std::to_string(r0) + "_" + std::to_string(r0 + rows);
    MatMulTensors pt = t;
    pt.out = builder.addTensor(passName, {rows, s.n}, s.outputType, "temporaries", false,
                               mapTensor({rows, s.n}, s.outputType, builder.target(), builder.opTiles()));
    pass.outTiles = builder.tensor(pt.out).mapping.size();
    lowerPass(builder, pass, plan, pt, r0, s.m, passName);
    std::vector<ir::CopyRegion> place{{{pt.out, 0, rows * s.n}, {t.out, r0 * s.n, (r0 + rows) * s.n}}};
    const ir::Cycles estimate = estimateCopy(builder, place);
    builder.copy(std::move(place), "place_rows", estimate);
  }
}

}  // namespace ipusim::scheduler
