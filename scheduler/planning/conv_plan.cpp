#include "scheduler/planning/conv_plan.hpp"

#include "model/codelets/cycle_model.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "scheduler/planning/cost_model.hpp"
#include "scheduler/planning/matmul_plan.hpp"
#include "scheduler/lowering/partials.hpp"
#include "scheduler/planning/plan_cache.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace ipusim::scheduler {
namespace {

std::int64_t floorDiv(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The vertex cost of each (typed) codelet, its params in declaration order.
ir::Cycles vertexCost(const ConvVertexShape& v, const model::Target& target) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<VertexCost>> costs;
  const VertexCost* cost = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto& c = costs[v.codelet];
    if (!c) {
      std::vector<std::string> order;
      for (const auto& p : v.params) order.push_back(p.first);
      c = std::make_unique<VertexCost>(v.codelet, order);
    }
    cost = c.get();
  }
  std::vector<double> params;
  for (const auto& p : v.params) params.push_back(p.second);
  return (*cost)(v.fieldSizes, std::move(params), target);
}

}  // namespace

const char* toString(ConvPass pass) {
  switch (pass) {
    case ConvPass::Forward: return "forward";
    case ConvPass::InputGrad: return "input gradient";
    case ConvPass::WeightUpdate: return "weight update";
  }
  return "?";
}

bool ConvShape::operator==(const ConvShape& o) const {
  return std::tie(pass, batch, inH, inW, inChans, outH, outW, outChans, kernelH, kernelW, strideH, strideW, dilationH,
                  dilationW, padTop, padLeft, flipped, inputType, outputType, inTiles, weightTiles, outTiles) ==
         std::tie(o.pass, o.batch, o.inH, o.inW, o.inChans, o.outH, o.outW, o.outChans, o.kernelH, o.kernelW,
                  o.strideH, o.strideW, o.dilationH, o.dilationW, o.padTop, o.padLeft, o.flipped, o.inputType,
                  o.outputType, o.inTiles,
                  o.weightTiles, o.outTiles);
}

std::uint64_t ConvShape::resultElements() const {
  return pass == ConvPass::WeightUpdate ? kernelH * kernelW * inChans * outChans : batch * outH * outW * outChans;
}
std::uint64_t ConvShape::weightElements() const {
  return pass == ConvPass::WeightUpdate ? batch * outH * outW * outChans : kernelH * kernelW * inChans * outChans;
}

InputRows inputRowsOf(const ConvShape& s, std::uint64_t y0, std::uint64_t rows) {
  // Dilated input coordinates [lo, hi] read by output rows [y0, y0 + rows).
  const std::int64_t d = std::int64_t(s.dilationH);
  const std::int64_t lo = std::int64_t(y0 * s.strideH) - s.padTop;
  const std::int64_t hi = std::int64_t((y0 + rows - 1) * s.strideH + s.kernelH - 1) - s.padTop;
  std::int64_t first = std::max<std::int64_t>(0, floorDiv(lo + d - 1, d));
  std::int64_t end = std::min<std::int64_t>(std::int64_t(s.inH), floorDiv(hi, d) + 1);
  if (end <= first) {  // only padding: one row that no output reads keeps the vertex well formed
    first = std::min<std::int64_t>(first, std::int64_t(s.inH) - 1);
    end = first + 1;
  }
  return {std::uint64_t(first), std::uint64_t(end - first), s.padTop - std::int64_t(y0 * s.strideH) + first * d};
}

ConvVertexShape convVertexShape(const ConvShape& s, std::uint64_t batch, std::uint64_t outRows, std::uint64_t inChans,
                                std::uint64_t outChans, const InputRows& w, ir::DType partialsType) {
  ConvVertexShape v;
  const std::uint64_t in = batch * w.count * s.inW * inChans, out = batch * outRows * s.outW * outChans;
  const std::uint64_t kernel = s.kernelH * s.kernelW * inChans * outChans;
  v.params = {{"batch", double(batch)}, {"inH", double(w.count)}, {"inW", double(s.inW)}, {"inChans", double(inChans)},
              {"outH", double(outRows)}, {"outW", double(s.outW)}, {"outChans", double(outChans)},
              {"kernelH", double(s.kernelH)}, {"kernelW", double(s.kernelW)}, {"strideH", double(s.strideH)},
              {"strideW", double(s.strideW)}, {"padTop", double(w.padTop)}, {"padLeft", double(s.padLeft)}};
  if (s.pass == ConvPass::WeightUpdate) {
    v.codelet = model::typedCodeletName("ConvWeightUpdatePartial", {s.inputType, partialsType});
    v.fieldSizes = {in, out, kernel};
  } else {
    v.codelet = model::typedCodeletName("ConvPartialnx1", {s.inputType, partialsType});
    v.fieldSizes = {in, kernel, out};
    v.params.push_back({"dilationH", double(s.dilationH)});
    v.params.push_back({"dilationW", double(s.dilationW)});
    v.params.push_back({"flipped", double(s.flipped)});
  }
  v.params.push_back({"accumulate", 0});
  return v;
}

ConvCost estimateConv(const ConvShape& s, std::uint64_t pb, std::uint64_t ph, std::uint64_t pci, std::uint64_t pco,
                      const model::Target& target) {
  ConvCost c;
  const BlockSplit B{s.batch, ceilDiv(s.batch, pb)}, H{s.outH, ceilDiv(s.outH, ph)};
  const BlockSplit CI{s.inChans, ceilDiv(s.inChans, pci)}, CO{s.outChans, ceilDiv(s.outChans, pco)};
  const bool wu = s.pass == ConvPass::WeightUpdate;
  // The input rows every row block reads (the largest, and their sum: halos are read twice).
  std::uint64_t sumRows = 0;
  InputRows largest{};
  largest.count = 0;
  for (std::uint64_t i = 0; i < ph; ++i) {
    const InputRows r = inputRowsOf(s, H.begin(i), H.length(i));
    sumRows += r.count;
    if (r.count > largest.count) largest = r;
  }
  const std::uint64_t reduction = wu ? pb * ph : pci;
  const ir::DType partialsType = reduction > 1 ? ir::DType::Float : s.outputType;
  const std::uint64_t e = ir::sizeOf(s.inputType), eP = ir::sizeOf(partialsType);
  const std::uint64_t window = B.size * largest.count * s.inW * CI.size;
  const std::uint64_t second = wu ? B.size * H.size * s.outW * CO.size : s.kernelH * s.kernelW * CI.size * CO.size;
  const std::uint64_t block = wu ? s.kernelH * s.kernelW * CI.size * CO.size : B.size * H.size * s.outW * CO.size;
  // 1. Gather: the busiest receiver (its window and second operand) or sender
  // (its share of every window, each read by pco tiles, and of the second
  // operand, read by pb ph tiles (kernel) or pci tiles (deltas): with
  // multicast each element is sent once, however many tiles read it; rows
  // two windows share (the halo) are sent once then too).
  const bool multicast = target.exchange.multicast != 0;
  const std::uint64_t windowsTotal =
      multicast ? s.batch * std::min(sumRows, s.inH) * s.inW * s.inChans : s.batch * sumRows * s.inW * s.inChans * pco;
  const std::uint64_t secondTotal = s.weightElements() * (multicast ? 1 : (wu ? pci : pb * ph));
  const std::uint64_t sent = ceilDiv(windowsTotal, std::max<std::uint64_t>(1, s.inTiles)) * e +
                             ceilDiv(secondTotal, std::max<std::uint64_t>(1, s.weightTiles)) * e;
  c.gather = exchangePhaseCycles(std::max((window + second) * e, sent), target);
  // 2. One AMP vertex per tile: the largest block.
  const ir::Cycles amp = vertexCost(convVertexShape(s, B.size, H.size, CI.size, CO.size, largest, partialsType), target);
  c.compute = computePhaseCycles(tileCycles({}, {amp}, target), target);
  // 3. Partials to the result's owners.
  const std::uint64_t piece = wu ? (pco == 1 ? CI.size * s.outChans : CO.size) : (pco == 1 ? block : CO.size);
  const PartialsCost r = estimatePartials(s.resultElements(), s.outTiles, block, reduction, piece, s.outputType, target);
  c.reduceExchange = r.exchange;
  c.reduce = r.reduce;
  c.temporaryBytesPerTile = std::max((window + second) * e + block * eP, r.bytesPerTile);
  return c;
}

std::vector<ConvPlan> convPlanSpace(const ConvShape& s, const model::Target& target, std::uint32_t tiles,
                                    std::uint64_t budget) {
  // Channels in whole AMP groups: block counts of the groups, mapped back to channels.
  auto channelCounts = [&](std::uint64_t chans, std::uint64_t grain, std::uint64_t limit) {
    std::vector<std::uint64_t> counts;
    const std::uint64_t groups = ceilDiv(chans, grain);
    for (std::uint64_t p : blockCounts(groups, limit)) counts.push_back(ceilDiv(chans, ceilDiv(groups, p) * grain));
    return counts;
  };
  const std::uint64_t outGrain = model::cycles::ampConvUnits(target, s.inputType);
  const std::uint64_t inGrain = s.inputType == ir::DType::Half ? model::cycles::kAmpHalfInputChannelsPerGroup
                                                                : model::cycles::kAmpFloatInputChannelsPerGroup;
  std::vector<ConvPlan> space;
  for (std::uint64_t pb : blockCounts(s.batch, tiles))
    for (std::uint64_t ph : blockCounts(s.outH, tiles / pb))
      for (std::uint64_t pco : channelCounts(s.outChans, outGrain, tiles / (pb * ph)))
        for (std::uint64_t pci : channelCounts(s.inChans, inGrain, tiles / (pb * ph * pco))) {
          // Split input channels with split output channels would reduce
          // every output position's channel block as its own piece (one
          // ReduceSum vertex each; poplin's reduce vertices take lists of
          // regions, ours one): not considered.
          if (s.pass != ConvPass::WeightUpdate && pci > 1 && pco > 1) continue;
          ConvPlan p{pb, ph, pci, pco, estimateConv(s, pb, ph, pci, pco, target)};
          p.fits = p.cost.temporaryBytesPerTile <= budget;
          space.push_back(p);
        }
  return space;
}

ConvPlan planConv(const ConvShape& s, const model::Target& target, std::uint32_t tiles, std::uint64_t budget) {
  static PlanCache<ConvShape, ConvPlan> cache;
  return cache.get(s, target, tiles, budget, [&] {
    ConvPlan best;
    bool have = false;
    for (const ConvPlan& p : convPlanSpace(s, target, tiles, budget)) {
      const bool better =
          !have || (p.fits != best.fits ? p.fits
                    : !p.fits ? p.cost.temporaryBytesPerTile < best.cost.temporaryBytesPerTile
                    : p.cost.total() != best.cost.total() ? p.cost.total() < best.cost.total()
                                                          : p.tiles() < best.tiles());
      if (better) best = p, have = true;
    }
    return best;
  });
}

}  // namespace ipusim::scheduler
