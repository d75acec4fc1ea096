#include "scheduler/lowering/matmul_lowering.hpp"

#include "scheduler/lowering/plan_temporaries.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "scheduler/planning/cost_model.hpp"
#include "scheduler/lowering/partials.hpp"
#include "scheduler/lowering/copy_estimate.hpp"
#include "scheduler/planning/tile_mapper.hpp"

#include <algorithm>
#include <tuple>

namespace ipusim::scheduler {
namespace {

struct Blocks {  // a dimension of d cut into p blocks of ceil(d / p)
  std::uint64_t d, size;
  std::uint64_t begin(std::uint64_t i) const { return i * size; }
  std::uint64_t length(std::uint64_t i) const { return std::min(d, (i + 1) * size) - i * size; }
};

}  // namespace

// One pass: rows [rowOffset, rowOffset + s.m) of a product whose a has
// `fullM` logical rows, into `t.out` (s.m x s.n); each group's (a grouped
// product's groups are whole: one pass).
void lowerPass(IrBuilder& builder, const MatMulShape& s, const MatMulPlan& plan, const MatMulTensors& t,
               std::uint64_t rowOffset, std::uint64_t fullM, const std::string& name) {
  const Blocks M{s.m, ceilDiv(s.m, plan.pm)}, K{s.k, ceilDiv(s.k, plan.pk)}, N{s.n, ceilDiv(s.n, plan.pn)};
  const Blocks G{s.groups, ceilDiv(s.groups, plan.pg)};
  const std::uint64_t tiles = plan.tiles();
  auto tileOf = [&](std::uint64_t g, std::uint64_t i, std::uint64_t j, std::uint64_t l) {
    return std::uint32_t(((g * plan.pm + i) * plan.pn + j) * plan.pk + l);
  };
  // Every tile of the plan, with its blocks: visit(tile, g, i, j, l).
  auto forEachTile = [&](auto&& visit) {
    for (std::uint64_t g = 0; g < plan.pg; ++g)
      for (std::uint64_t i = 0; i < plan.pm; ++i)
        for (std::uint64_t j = 0; j < plan.pn; ++j)
          for (std::uint64_t l = 0; l < plan.pk; ++l) visit(tileOf(g, i, j, l), g, i, j, l);
  };

  // Per-tile operand buffers and partials, in tile order: each group's block in turn.
  std::vector<std::uint32_t> tileIds(tiles);
  std::vector<std::uint64_t> aSizes(tiles), bSizes(tiles), pSizes(tiles);
  forEachTile([&](std::uint32_t tile, std::uint64_t g, std::uint64_t i, std::uint64_t j, std::uint64_t l) {
    tileIds[tile] = tile;
    aSizes[tile] = G.length(g) * M.length(i) * K.length(l);
    bSizes[tile] = G.length(g) * K.length(l) * N.length(j);
    pSizes[tile] = G.length(g) * M.length(i) * N.length(j);
  });
  ir::Id aBuf;
  std::vector<std::uint64_t> aAt;
  std::tie(aBuf, aAt) = builder.addBlocks(name + kMatMulABlocks, s.inputType, tileIds, aSizes);
  ir::Id bBuf;
  std::vector<std::uint64_t> bAt;
  std::tie(bBuf, bAt) = builder.addBlocks(name + kMatMulBBlocks, s.inputType, tileIds, bSizes);
  // Partials in float (PopLibs' default) unless one pass writes a half output directly.
  const ir::DType partialsType = plan.pk > 1 ? ir::DType::Float : s.outputType;
  ir::Id partials;
  std::vector<std::uint64_t> pAt;
  std::tie(partials, pAt) = builder.addBlocks(name + kPlanPartials, partialsType, tileIds, pSizes);
  const std::uint64_t aGroup = fullM * s.k, bGroup = s.k * s.n;  // one group's elements of a and b

  // 1. Gather each tile's blocks as stored (the vertex reads them transposed).
  std::vector<ir::CopyRegion> gather;
  gather.reserve(2 * tiles * G.size);
  forEachTile([&](std::uint32_t tile, std::uint64_t g, std::uint64_t i, std::uint64_t j, std::uint64_t l) {
    const std::uint64_t m0 = M.begin(i), mb = M.length(i), k0 = K.begin(l), kb = K.length(l);
    const std::uint64_t n0 = N.begin(j), nb = N.length(j);
    for (std::uint64_t q = 0; q < G.length(g); ++q) {
      const std::uint64_t a0 = (G.begin(g) + q) * aGroup, b0 = (G.begin(g) + q) * bGroup;
      const std::uint64_t aDst = aAt[tile] + q * mb * kb, bDst = bAt[tile] + q * kb * nb;
      gather.push_back(s.transposeA ? stridedBlock(t.a, a0 + k0 * fullM + rowOffset + m0, kb, mb, fullM, aBuf, aDst)
                                    : stridedBlock(t.a, a0 + (rowOffset + m0) * s.k + k0, mb, kb, s.k, aBuf, aDst));
      gather.push_back(s.transposeB ? stridedBlock(t.b, b0 + n0 * s.k + k0, nb, kb, s.k, bBuf, bDst)
                                    : stridedBlock(t.b, b0 + k0 * s.n + n0, kb, nb, s.n, bBuf, bDst));
    }
  });
  builder.copy(std::move(gather), "gather_operands", plan.cost.gather);

  // 2. The AMP: one MatMulPartial per tile and group.
  std::vector<ir::Vertex> amp;
  amp.reserve(tiles * G.size);
  forEachTile([&](std::uint32_t tile, std::uint64_t g, std::uint64_t i, std::uint64_t j, std::uint64_t l) {
    const std::uint64_t mb = M.length(i), kb = K.length(l), nb = N.length(j);
    for (std::uint64_t q = 0; q < G.length(g); ++q) {
      const std::uint64_t a0 = aAt[tile] + q * mb * kb, b0 = bAt[tile] + q * kb * nb, p0 = pAt[tile] + q * mb * nb;
      amp.push_back({model::typedCodeletName("MatMulPartial", {s.inputType, partialsType}), tile,
                     {{"a", {aBuf, a0, a0 + mb * kb}}, {"b", {bBuf, b0, b0 + kb * nb}}, {"out", {partials, p0, p0 + mb * nb}}},
                     {{"m", double(mb)}, {"k", double(kb)}, {"n", double(nb)}, {"transposeA", double(s.transposeA)},
                      {"transposeB", double(s.transposeB)}, {"accumulate", 0}}});
    }
  });
  builder.execute(std::move(amp), "");

  // 3. The output's owners take their elements (reduced when pk > 1): the pk
  // partials of an element sit at the same offset of the blocks of tiles
  // l = 0..pk-1, which are consecutive in `partials` (stride: one block).
  const std::uint64_t groupElements = s.m * s.n;
  auto locate = [&](std::uint64_t e) {
    const std::uint64_t group = e / groupElements, within = e % groupElements;
    const std::uint64_t row = within / s.n, col = within % s.n, i = row / M.size, j = col / N.size, g = group / G.size;
    const std::uint64_t mb = M.length(i), nb = N.length(j), q = group - G.begin(g);
    const std::uint64_t offset = q * mb * nb + (row - M.begin(i)) * nb + (col - N.begin(j));
    // A whole-width block continues on the next row; otherwise the piece ends with the block's columns.
    const std::uint64_t pieceEnd =
        group * groupElements + (plan.pn == 1 ? (M.begin(i) + mb) * s.n : row * s.n + N.begin(j) + nb);
    return PartialLocation{pAt[tileOf(g, i, j, 0)] + offset, G.length(g) * mb * nb, pieceEnd};
  };
  placeOrReducePartials(builder, partials, t.out, s.outputType, plan.pk, locate, name, plan.cost.reduceExchange);
}

namespace {

// One pass (lowerPass with rowOffset and fullM), with the same product
// recorded whole for the model to compute in one kernel
// (model/ir/fused_matmul.hpp), unless a tile's k slice is empty (the whole
// kernel sums every slice). A grouped product records each group's, all
// over the same programs (each group's elements are summed by its tiles in
// the same order as a plain product's).
void lowerFusedPass(IrBuilder& builder, const MatMulShape& s, const MatMulPlan& plan, const MatMulTensors& t,
                    std::uint64_t rowOffset, std::uint64_t fullM, const std::string& name) {
  const ir::Id first = ir::Id(builder.exe().programs.size());
  lowerPass(builder, s, plan, t, rowOffset, fullM, name);
  const std::uint64_t kSlice = ceilDiv(s.k, plan.pk);
  if ((plan.pk - 1) * kSlice >= s.k) return;
  std::vector<ir::Id> programs;
  for (ir::Id id = first; id < builder.exe().programs.size(); ++id) programs.push_back(id);
  const std::uint64_t aGroup = fullM * s.k, bGroup = s.k * s.n, outGroup = s.m * s.n;
  for (std::uint64_t g = 0; g < s.groups; ++g) {
    ir::FusedMatMul fused;
    fused.programs = programs;
    fused.a = {t.a, g * aGroup, (g + 1) * aGroup};
    fused.b = {t.b, g * bGroup, (g + 1) * bGroup};
    fused.out = {t.out, g * outGroup, (g + 1) * outGroup};
    fused.m = s.m, fused.k = s.k, fused.n = s.n;
    fused.aRows = fullM, fused.rowOffset = rowOffset;
    fused.kSlice = kSlice;
    fused.transposeA = s.transposeA, fused.transposeB = s.transposeB;
    fused.inputType = s.inputType, fused.outputType = s.outputType;
    builder.exe().fusedMatMuls.push_back(std::move(fused));
  }
}

}  // namespace

void lowerMatMul(IrBuilder& builder, const MatMulShape& s, const MatMulPlan& plan, const MatMulTensors& t,
                 const std::string& name) {
  if (plan.serial <= 1 || s.groups > 1) {
    lowerFusedPass(builder, s, plan, t, 0, s.m, name);
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
    lowerFusedPass(builder, pass, plan, pt, r0, s.m, passName);
    std::vector<ir::CopyRegion> place{{{pt.out, 0, rows * s.n}, {t.out, r0 * s.n, (r0 + rows) * s.n}}};
    const ir::Cycles estimate = estimateCopy(builder, place);
    builder.copy(std::move(place), "place_rows", estimate);
  }
}

}  // namespace ipusim::scheduler
