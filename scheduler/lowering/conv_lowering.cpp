#include "scheduler/lowering/conv_lowering.hpp"

#include "scheduler/lowering/plan_temporaries.hpp"
#include "scheduler/planning/cost_model.hpp"
#include "scheduler/lowering/partials.hpp"

#include <tuple>

namespace ipusim::scheduler {

std::vector<ir::CopyRegion> nhwcWindow(ir::Id src, std::uint64_t height, std::uint64_t width, std::uint64_t chans,
                                       std::uint64_t b0, std::uint64_t bLen, std::uint64_t r0, std::uint64_t rLen,
                                       std::uint64_t c0, std::uint64_t cLen, ir::Id dst, std::uint64_t at) {
  std::vector<ir::CopyRegion> regions;
  if (rLen == height) {  // whole images: one region for all of them
    regions.push_back(stridedBlock(src, b0 * height * width * chans + c0, bLen * height * width, cLen, chans, dst, at));
    return regions;
  }
  for (std::uint64_t b = b0; b < b0 + bLen; ++b) {
    regions.push_back(stridedBlock(src, ((b * height + r0) * width) * chans + c0, rLen * width, cLen, chans, dst, at));
    at += rLen * width * cLen;
  }
  return regions;
}

void lowerConv(IrBuilder& builder, const ConvShape& s, const ConvPlan& plan, const ConvTensors& t,
               const std::string& name) {
  const bool wu = s.pass == ConvPass::WeightUpdate;
  const BlockSplit G{s.groups, ceilDiv(s.groups, plan.pg)};
  const BlockSplit B{s.batch, ceilDiv(s.batch, plan.pb)}, H{s.outH, ceilDiv(s.outH, plan.ph)};
  const BlockSplit CI{s.inChans, ceilDiv(s.inChans, plan.pci)}, CO{s.outChans, ceilDiv(s.outChans, plan.pco)};
  const std::uint64_t inC = s.groups * s.inChans, outC = s.groups * s.outChans;
  // The reduction blocks of a result element are consecutive tiles.
  auto tileOf = [&](std::uint64_t ig, std::uint64_t ib, std::uint64_t ih, std::uint64_t j, std::uint64_t l) {
    return std::uint32_t(wu ? ((((l * plan.pco + j) * plan.pg + ig) * plan.pb + ib) * plan.ph + ih)
                            : ((((ig * plan.pb + ib) * plan.ph + ih) * plan.pco + j) * plan.pci + l));
  };
  const std::uint64_t tiles = plan.tiles();
  const ir::DType partialsType = plan.partialsType(s);
  struct Block { std::uint64_t ig, ib, ih, j, l; InputRows rows; ConvVertexShape vertex; };
  std::vector<Block> blocks(tiles);
  std::vector<std::uint32_t> tileIds(tiles);
  std::vector<std::uint64_t> inSizes(tiles), wSizes(tiles), pSizes(tiles);
  for (std::uint64_t ig = 0; ig < plan.pg; ++ig)
    for (std::uint64_t ib = 0; ib < plan.pb; ++ib)
      for (std::uint64_t ih = 0; ih < plan.ph; ++ih)
        for (std::uint64_t j = 0; j < plan.pco; ++j)
          for (std::uint64_t l = 0; l < plan.pci; ++l) {
            const std::uint32_t tile = tileOf(ig, ib, ih, j, l);
            const InputRows rows = inputRowsOf(s, H.begin(ih), H.length(ih));
            blocks[tile] = {ig, ib, ih, j, l, rows,
                            convVertexShape(s, plan, B.length(ib), H.length(ih), G.length(ig), CI.length(l),
                                            CO.length(j), rows, partialsType)};
            tileIds[tile] = tile;
            const auto& sizes = blocks[tile].vertex.fieldSizes;  // in, kernel or deltas, result (field order)
            inSizes[tile] = sizes[0], wSizes[tile] = sizes[1], pSizes[tile] = sizes[2];
          }
  ir::Id inBuf;
  std::vector<std::uint64_t> inAt;
  std::tie(inBuf, inAt) = builder.addBlocks(name + kConvWindows, s.inputType, tileIds, inSizes);
  ir::Id wBuf;
  std::vector<std::uint64_t> wAt;
  std::tie(wBuf, wAt) =
      builder.addBlocks(name + (wu ? kConvDeltasBlocks : kConvKernelBlocks), s.inputType, tileIds, wSizes);
  ir::Id partials;
  std::vector<std::uint64_t> pAt;
  std::tie(partials, pAt) = builder.addBlocks(name + kPlanPartials, partialsType, tileIds, pSizes);

  // A block's channels of a tensor with `perGroup` channels per group: its
  // groups' [c0, c0 + cLen) each, contiguous (the planner splits a group's
  // channels only when a block holds one group).
  auto channels = [](const BlockSplit& groups, std::uint64_t ig, std::uint64_t perGroup, std::uint64_t c0,
                     std::uint64_t cLen) {
    return std::pair{groups.begin(ig) * perGroup + c0, groups.length(ig) * cLen};
  };

  // 1. Gather every tile's window and second operand.
  std::vector<ir::CopyRegion> gather;
  for (std::uint32_t tile = 0; tile < tiles; ++tile) {
    const Block& k = blocks[tile];
    const std::uint64_t b0 = B.begin(k.ib), bLen = B.length(k.ib);
    const auto [ci0, ciLen] = channels(G, k.ig, s.inChans, CI.begin(k.l), CI.length(k.l));
    const auto [co0, coLen] = channels(G, k.ig, s.outChans, CO.begin(k.j), CO.length(k.j));
    for (auto& r : nhwcWindow(t.in, s.inH, s.inW, inC, b0, bLen, k.rows.first, k.rows.count, ci0, ciLen, inBuf, inAt[tile]))
      gather.push_back(r);
    if (wu) {
      for (auto& r : nhwcWindow(t.weights, s.outH, s.outW, outC, b0, bLen, H.begin(k.ih), H.length(k.ih), co0, coLen,
                                wBuf, wAt[tile]))
        gather.push_back(r);
      continue;
    }
    // Kernel slabs [kh][kw]: rows of the stored third dimension (a group's
    // channels), runs of the fourth (every group's).
    const std::uint64_t third0 = s.flipped ? CO.begin(k.j) : CI.begin(k.l);
    const std::uint64_t thirdLen = s.flipped ? CO.length(k.j) : CI.length(k.l);
    const std::uint64_t thirdAll = s.flipped ? s.outChans : s.inChans;
    const auto [fourth0, fourthLen] = s.flipped ? std::pair{ci0, ciLen} : std::pair{co0, coLen};
    const std::uint64_t fourthAll = s.flipped ? inC : outC;
    const std::uint64_t slab = thirdAll * fourthAll;
    if (thirdLen == thirdAll && fourthLen == fourthAll) {
      gather.push_back(stridedBlock(t.weights, 0, 1, s.kernelH * s.kernelW * slab, slab, wBuf, wAt[tile]));
      continue;
    }
    std::uint64_t at = wAt[tile];
    for (std::uint64_t kk = 0; kk < s.kernelH * s.kernelW; ++kk) {
      gather.push_back(stridedBlock(t.weights, kk * slab + third0 * fourthAll + fourth0, thirdLen, fourthLen, fourthAll,
                                    wBuf, at));
      at += thirdLen * fourthLen;
    }
  }
  builder.copy(std::move(gather), "gather_operands", plan.cost.gather);

  // 2. One vertex per tile.
  std::vector<ir::Vertex> amp;
  amp.reserve(tiles);
  for (std::uint32_t tile = 0; tile < tiles; ++tile) {
    const ConvVertexShape& v = blocks[tile].vertex;
    Params params;
    for (const auto& [key, value] : v.params) params[key] = value;
    amp.push_back({v.codelet, tile,
                   {{"in", {inBuf, inAt[tile], inAt[tile] + inSizes[tile]}},
                    {wu ? "deltas" : "weights", {wBuf, wAt[tile], wAt[tile] + wSizes[tile]}},
                    {"out", {partials, pAt[tile], pAt[tile] + pSizes[tile]}}},
                   std::move(params)});
  }
  builder.execute(std::move(amp), "");

  // 3. The result's owners take their elements. A block's partials are
  // [positions or kernel taps x its input channels][its groups x its output channels].
  const bool allChannels = plan.pg == 1 && plan.pco == 1;
  auto locate = [&](std::uint64_t e) {
    const std::uint64_t c = e % outC, row = e / outC, g = c / s.outChans, co = c % s.outChans;
    const std::uint64_t ig = g / G.size, j = co / CO.size;
    const std::uint64_t g0 = G.begin(ig), co0 = CO.begin(j), coLen = CO.length(j), gLen = G.length(ig);
    const std::uint64_t width = gLen * coLen, at = (g - g0) * coLen + (co - co0);  // within a block's channel row
    // The block's channels of this row end at:
    const std::uint64_t rowEnd = row * outC + (g0 * s.outChans + co0) + width;
    if (wu) {  // result [kh kw][ci][g co]
      const std::uint64_t ci = row % s.inChans, kk = row / s.inChans, l = ci / CI.size;
      const std::uint64_t ci0 = CI.begin(l), ciLen = CI.length(l);
      const std::uint64_t pieceEnd = allChannels ? (kk * s.inChans + ci0 + ciLen) * outC : rowEnd;
      return PartialLocation{pAt[tileOf(ig, 0, 0, j, l)] + (kk * ciLen + (ci - ci0)) * width + at,
                             s.kernelH * s.kernelW * ciLen * width, pieceEnd};
    }
    // result [b][oy][ox][g co]
    const std::uint64_t ox = row % s.outW, oy = (row / s.outW) % s.outH, b = row / (s.outW * s.outH);
    const std::uint64_t ib = b / B.size, ih = oy / H.size, b0 = B.begin(ib), y0 = H.begin(ih), hLen = H.length(ih);
    const std::uint64_t pieceEnd = allChannels ? (b * s.outH + y0 + hLen) * s.outW * outC : rowEnd;
    return PartialLocation{pAt[tileOf(ig, ib, ih, j, 0)] + (((b - b0) * hLen + (oy - y0)) * s.outW + ox) * width + at,
                           B.length(ib) * hLen * s.outW * width, pieceEnd};
  };
  placeOrReducePartials(builder, partials, t.out, s.outputType, plan.reductionBlocks(s.pass), locate, name,
                        plan.cost.reduceExchange);
}

}  // namespace ipusim::scheduler
