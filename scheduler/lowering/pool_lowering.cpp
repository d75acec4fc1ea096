#include "scheduler/lowering/pool_lowering.hpp"

#include "model/codelets/typed_codelet.hpp"

#include "scheduler/lowering/conv_lowering.hpp"
#include "scheduler/planning/cost_model.hpp"
#include "scheduler/lowering/partials.hpp"
#include "scheduler/lowering/copy_estimate.hpp"

#include <algorithm>
#include <tuple>

namespace ipusim::scheduler {
namespace {

const char* codeletName(PoolCodelet c) {
  switch (c) {
    case PoolCodelet::MaxPool: return "MaxPool";
    case PoolCodelet::AvgPool: return "AvgPool";
    case PoolCodelet::MaxPoolGrad: return "MaxPoolGrad";
    case PoolCodelet::AvgPoolGrad: return "AvgPoolGrad";
  }
  return "?";
}

}  // namespace

void lowerPool(IrBuilder& builder, PoolCodelet codelet, const PoolGeometry& g, const PoolTensors& t,
               std::uint32_t tiles, const std::string& name) {
  const bool grad = codelet == PoolCodelet::MaxPoolGrad || codelet == PoolCodelet::AvgPoolGrad;
  const bool readsInput = codelet != PoolCodelet::AvgPoolGrad;
  const std::uint64_t pb = std::min<std::uint64_t>(g.batch, tiles);
  const std::uint64_t pairs = ceilDiv(g.chans, 2);
  const std::uint64_t pcPairs = std::max<std::uint64_t>(1, std::min<std::uint64_t>(pairs, tiles / pb));
  const std::uint64_t cSize = std::min(g.chans, ceilDiv(pairs, pcPairs) * 2), pc = ceilDiv(g.chans, cSize);
  const std::uint64_t bSize = ceilDiv(g.batch, pb);
  const std::uint64_t resultH = grad ? g.inH : g.outH, resultW = grad ? g.inW : g.outW;
  auto bLen = [&](std::uint64_t i) { return std::min(g.batch, (i + 1) * bSize) - i * bSize; };
  auto cLen = [&](std::uint64_t j) { return std::min(g.chans, (j + 1) * cSize) - j * cSize; };
  std::vector<std::uint32_t> tileIds;
  std::vector<std::uint64_t> inSizes, gradSizes, resultSizes;
  for (std::uint64_t i = 0; i < pb; ++i)
    for (std::uint64_t j = 0; j < pc; ++j) {
      tileIds.push_back(std::uint32_t(i * pc + j));
      inSizes.push_back(readsInput ? bLen(i) * g.inH * g.inW * cLen(j) : 0);
      gradSizes.push_back(grad ? bLen(i) * g.outH * g.outW * cLen(j) : 0);
      resultSizes.push_back(bLen(i) * resultH * resultW * cLen(j));
    }
  std::vector<ir::CopyRegion> gather;
  ir::Id inBuf = ir::kNoId, gradBuf = ir::kNoId;
  std::vector<std::uint64_t> inAt, gradAt;
  if (readsInput) std::tie(inBuf, inAt) = builder.addBlocks(name + "/pool_windows", g.dtype, tileIds, inSizes);
  if (grad) std::tie(gradBuf, gradAt) = builder.addBlocks(name + "/grad_blocks", g.dtype, tileIds, gradSizes);
  ir::Id result;
  std::vector<std::uint64_t> rAt;
  std::tie(result, rAt) = builder.addBlocks(name + "/result_blocks", g.dtype, tileIds, resultSizes);
  for (std::uint64_t i = 0; i < pb; ++i)
    for (std::uint64_t j = 0; j < pc; ++j) {
      const std::uint64_t tile = i * pc + j;
      if (readsInput)
        for (auto& r : nhwcWindow(t.in, g.inH, g.inW, g.chans, i * bSize, bLen(i), 0, g.inH, j * cSize, cLen(j), inBuf, inAt[tile]))
          gather.push_back(r);
      if (grad)
        for (auto& r : nhwcWindow(t.gradOut, g.outH, g.outW, g.chans, i * bSize, bLen(i), 0, g.outH, j * cSize, cLen(j),
                                  gradBuf, gradAt[tile]))
          gather.push_back(r);
    }
  const ir::Cycles gatherEstimate = estimateCopy(builder, gather);
  builder.copy(std::move(gather), "gather_operands", gatherEstimate);

  std::vector<ir::Vertex> vertices;
  for (std::uint64_t i = 0; i < pb; ++i)
    for (std::uint64_t j = 0; j < pc; ++j) {
      const std::uint32_t tile = std::uint32_t(i * pc + j);
      std::vector<ir::VertexField> fields;
      const ir::TensorRef resultRef{result, rAt[tile], rAt[tile] + resultSizes[tile]};
      if (readsInput) fields.push_back({"in", {inBuf, inAt[tile], inAt[tile] + inSizes[tile]}});
      if (grad) fields.push_back({"gradOut", {gradBuf, gradAt[tile], gradAt[tile] + gradSizes[tile]}});
      fields.push_back({grad ? "gradIn" : "out", resultRef});
      vertices.push_back({model::typedCodeletName(codeletName(codelet), {g.dtype}), tile, std::move(fields),
                          {{"batch", double(bLen(i))}, {"inH", double(g.inH)}, {"inW", double(g.inW)},
                           {"chans", double(cLen(j))}, {"outH", double(g.outH)}, {"outW", double(g.outW)},
                           {"kernelH", double(g.kernelH)}, {"kernelW", double(g.kernelW)},
                           {"strideH", double(g.strideH)}, {"strideW", double(g.strideW)},
                           {"padTop", double(g.padTop)}, {"padLeft", double(g.padLeft)}}});
    }
  builder.execute(std::move(vertices), "");

  // Each block into the result's mapping: runs of a position's channels
  // (whole images when the channels are not split).
  auto locate = [&](std::uint64_t e) {
    const std::uint64_t c = e % g.chans, position = e / g.chans, b = position / (resultH * resultW);
    const std::uint64_t i = b / bSize, j = c / cSize;
    const std::uint64_t local = (b - i * bSize) * resultH * resultW + position % (resultH * resultW);
    const std::uint64_t pieceEnd = pc == 1 ? (i * bSize + bLen(i)) * resultH * resultW * g.chans : e - c + j * cSize + cLen(j);
    return PartialLocation{rAt[i * pc + j] + local * cLen(j) + (c - j * cSize), resultSizes[i * pc + j], pieceEnd};
  };
  placeOrReducePartials(builder, result, t.out, g.dtype, 1, locate, name, std::nullopt);
}

}  // namespace ipusim::scheduler
