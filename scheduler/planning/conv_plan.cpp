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

const char* toString(ConvMethod method) {
  switch (method) {
    case ConvMethod::Amp: return "AMP";
    case ConvMethod::HorizontalMac: return "HMAC";
    case ConvMethod::VerticalMac: return "VMAC";
  }
  return "?";
}

bool ConvShape::operator==(const ConvShape& o) const {
  return std::tie(pass, batch, inH, inW, inChans, outH, outW, outChans, groups, kernelH, kernelW, strideH, strideW,
                  dilationH, dilationW, kernelDilationH, kernelDilationW, padTop, padLeft, flipped, inputType,
                  outputType, inTiles, weightTiles, outTiles) ==
         std::tie(o.pass, o.batch, o.inH, o.inW, o.inChans, o.outH, o.outW, o.outChans, o.groups, o.kernelH,
                  o.kernelW, o.strideH, o.strideW, o.dilationH, o.dilationW, o.kernelDilationH, o.kernelDilationW,
                  o.padTop, o.padLeft, o.flipped, o.inputType, o.outputType, o.inTiles, o.weightTiles, o.outTiles);
}

std::uint64_t ConvShape::resultElements() const {
  return pass == ConvPass::WeightUpdate ? kernelH * kernelW * inChans * groups * outChans
                                        : batch * outH * outW * groups * outChans;
}
std::uint64_t ConvShape::weightElements() const {
  return pass == ConvPass::WeightUpdate ? batch * outH * outW * groups * outChans
                                        : kernelH * kernelW * inChans * groups * outChans;
}

InputRows inputRowsOf(const ConvShape& s, std::uint64_t y0, std::uint64_t rows) {
  // Dilated input coordinates [lo, hi] read by output rows [y0, y0 + rows).
  const std::int64_t d = std::int64_t(s.dilationH);
  const std::int64_t lo = std::int64_t(y0 * s.strideH) - s.padTop;
  const std::int64_t hi =
      std::int64_t((y0 + rows - 1) * s.strideH + (s.kernelH - 1) * s.kernelDilationH) - s.padTop;
  std::int64_t first = std::max<std::int64_t>(0, floorDiv(lo + d - 1, d));
  std::int64_t end = std::min<std::int64_t>(std::int64_t(s.inH), floorDiv(hi, d) + 1);
  if (end <= first) {  // only padding: one row that no output reads keeps the vertex well formed
    first = std::min<std::int64_t>(first, std::int64_t(s.inH) - 1);
    end = first + 1;
  }
  return {std::uint64_t(first), std::uint64_t(end - first), s.padTop - std::int64_t(y0 * s.strideH) + first * d};
}

ConvVertexShape convVertexShape(const ConvShape& s, const ConvPlan& plan, std::uint64_t batch, std::uint64_t outRows,
                                std::uint64_t groups, std::uint64_t inChans, std::uint64_t outChans,
                                const InputRows& w, ir::DType partialsType) {
  ConvVertexShape v;
  const std::uint64_t in = batch * w.count * s.inW * groups * inChans, out = batch * outRows * s.outW * groups * outChans;
  const std::uint64_t kernel = s.kernelH * s.kernelW * inChans * groups * outChans;
  v.params = {{"batch", double(batch)}, {"inH", double(w.count)}, {"inW", double(s.inW)}, {"inChans", double(inChans)},
              {"outH", double(outRows)}, {"outW", double(s.outW)}, {"outChans", double(outChans)},
              {"kernelH", double(s.kernelH)}, {"kernelW", double(s.kernelW)}, {"strideH", double(s.strideH)},
              {"strideW", double(s.strideW)}, {"padTop", double(w.padTop)}, {"padLeft", double(s.padLeft)}};
  const std::vector<std::pair<std::string, double>> groupParams{{"convGroups", double(groups)},
                                                                {"kernelDilationH", double(s.kernelDilationH)},
                                                                {"kernelDilationW", double(s.kernelDilationW)}};
  if (s.pass == ConvPass::WeightUpdate) {
    const char* base = plan.method == ConvMethod::Amp ? "ConvWeightUpdatePartial" : "ConvWeightUpdateHorizontalMac";
    v.codelet = model::typedCodeletName(base, {s.inputType, partialsType});
    v.fieldSizes = {in, out, kernel};
    v.params.push_back({"accumulate", 0});
    v.params.insert(v.params.end(), groupParams.begin(), groupParams.end());
    return v;
  }
  const char* base = plan.method == ConvMethod::Amp             ? "ConvPartialnx1"
                     : plan.method == ConvMethod::HorizontalMac ? "ConvPartialHorizontalMac"
                                                                : "ConvPartialVerticalMac";
  v.codelet = model::typedCodeletName(base, {s.inputType, partialsType});
  v.fieldSizes = {in, kernel, out};
  v.params.push_back({"dilationH", double(s.dilationH)});
  v.params.push_back({"dilationW", double(s.dilationW)});
  v.params.push_back({"flipped", double(s.flipped)});
  v.params.push_back({"accumulate", 0});
  v.params.insert(v.params.end(), groupParams.begin(), groupParams.end());
  if (plan.method == ConvMethod::VerticalMac) v.params.push_back({"convGroupsPerGroup", double(plan.groupsPerVector)});
  return v;
}

ConvCost estimateConv(const ConvShape& s, const ConvPlan& p, const model::Target& target) {
  ConvCost c;
  const BlockSplit G{s.groups, ceilDiv(s.groups, p.pg)};
  const BlockSplit B{s.batch, ceilDiv(s.batch, p.pb)}, H{s.outH, ceilDiv(s.outH, p.ph)};
  const BlockSplit CI{s.inChans, ceilDiv(s.inChans, p.pci)}, CO{s.outChans, ceilDiv(s.outChans, p.pco)};
  const bool wu = s.pass == ConvPass::WeightUpdate;
  // The input rows every row block reads (the largest, and their sum: halos are read twice).
  std::uint64_t sumRows = 0;
  InputRows largest{};
  largest.count = 0;
  for (std::uint64_t i = 0; i < p.ph; ++i) {
    const InputRows r = inputRowsOf(s, H.begin(i), H.length(i));
    sumRows += r.count;
    if (r.count > largest.count) largest = r;
  }
  const std::uint64_t reduction = p.reductionBlocks(s.pass);
  const ir::DType partialsType = p.partialsType(s);
  const std::uint64_t e = ir::sizeOf(s.inputType), eP = ir::sizeOf(partialsType);
  const std::uint64_t inC = s.groups * s.inChans;
  const std::uint64_t window = B.size * largest.count * s.inW * G.size * CI.size;
  const std::uint64_t second = wu ? B.size * H.size * s.outW * G.size * CO.size
                                  : s.kernelH * s.kernelW * CI.size * G.size * CO.size;
  const std::uint64_t block = wu ? s.kernelH * s.kernelW * CI.size * G.size * CO.size
                                 : B.size * H.size * s.outW * G.size * CO.size;
  // 1. Gather: the busiest receiver (its window and second operand) or sender
  // (its share of every window, each read by pco tiles, and of the second
  // operand, read by pb ph tiles (kernel) or pci tiles (deltas): with
  // multicast each element is sent once, however many tiles read it; rows
  // two windows share (the halo) are sent once then too).
  const bool multicast = target.exchange.multicast != 0;
  const std::uint64_t windowsTotal =
      multicast ? s.batch * std::min(sumRows, s.inH) * s.inW * inC : s.batch * sumRows * s.inW * inC * p.pco;
  const std::uint64_t secondTotal = s.weightElements() * (multicast ? 1 : (wu ? p.pci : p.pb * p.ph));
  const std::uint64_t sent = ceilDiv(windowsTotal, std::max<std::uint64_t>(1, s.inTiles)) * e +
                             ceilDiv(secondTotal, std::max<std::uint64_t>(1, s.weightTiles)) * e;
  c.gather = exchangePhaseCycles(std::max((window + second) * e, sent), target);
  // 2. One vertex per tile: the largest block.
  const ir::Cycles vertex =
      vertexCost(convVertexShape(s, p, B.size, H.size, G.size, CI.size, CO.size, largest, partialsType), target);
  c.compute = computePhaseCycles(tileCycles({}, {vertex}, target), target);
  // 3. Partials to the result's owners (gathered into one matrix an owner:
  // how a block's elements run in the output no longer matters).
  const PartialsCost r = estimatePartials(s.resultElements(), s.outTiles, block, reduction, s.outputType, target);
  c.reduceExchange = r.exchange;
  c.reduce = r.reduce;
  // The VMAC's workers each accumulate into their own copy of the partials.
  const std::uint64_t workerCopies = p.method == ConvMethod::VerticalMac ? target.tile.workerContexts : 0;
  c.temporaryBytesPerTile = std::max((window + second) * e + block * eP * (1 + workerCopies), r.bytesPerTile);
  return c;
}

std::vector<ConvPlan> convPlanSpace(const ConvShape& s, const model::Target& target, std::uint32_t tiles,
                                    std::uint64_t budget) {
  // Counts in whole grains: block counts of the grains, mapped back to elements.
  auto grainCounts = [&](std::uint64_t n, std::uint64_t grain, std::uint64_t limit) {
    std::vector<std::uint64_t> counts;
    const std::uint64_t grains = ceilDiv(n, grain);
    for (std::uint64_t p : blockCounts(grains, std::max<std::uint64_t>(1, limit)))
      counts.push_back(ceilDiv(n, ceilDiv(grains, p) * grain));
    return counts;
  };
  const bool wu = s.pass == ConvPass::WeightUpdate, half = s.inputType == ir::DType::Half;
  // The candidates (method, conv groups per vector, channel grains), after
  // lib/poplin/ConvVertexType.cpp getConvVertex{AMP,HMAC,VMAC}Candidates.
  struct Candidate {
    ConvMethod method;
    std::uint64_t groupsPerVector, groupGrain, inGrain, outGrain;
  };
  // AMP: input channels in the conv units' groups (8 floats, 16 halves),
  // output channels in the conv units' count.
  std::vector<Candidate> candidates{
      {ConvMethod::Amp, 1, 1,
       half ? model::cycles::kAmpHalfInputChannelsPerGroup : model::cycles::kAmpFloatInputChannelsPerGroup,
       model::cycles::ampConvUnits(target, s.inputType)}};
  // HMAC: input channels in its grain (1 float, 2 halves: "never ... padding
  // when sending activations over the exchange"), output channels in groups
  // of 1 (float partials) or 2 (half partials: two in its inner loop).
  candidates.push_back(
      {ConvMethod::HorizontalMac, 1, 1, half ? 2u : 1u, half && s.outputType == ir::DType::Half ? 2u : 1u});
  // VMAC: half activations, one input and one output channel per group,
  // groups in vectors of the half vector width (4), and of 8 and 16 with
  // half partials; not for the weight update (not modelled).
  if (half && !wu && s.outChans == 1) {
    const std::uint64_t width = model::cycles::elementsPerVector(target, ir::DType::Half);
    candidates.push_back({ConvMethod::VerticalMac, width, width, 1, 1});
    if (s.outputType == ir::DType::Half)
      for (std::uint64_t g : {8u, 16u}) candidates.push_back({ConvMethod::VerticalMac, g, g, 1, 1});
  }
  std::vector<ConvPlan> space;
  for (const Candidate& m : candidates)
    for (std::uint64_t pg : grainCounts(s.groups, m.groupGrain, tiles))
      for (std::uint64_t pb : blockCounts(s.batch, tiles / pg))
        for (std::uint64_t ph : blockCounts(s.outH, tiles / (pg * pb)))
          for (std::uint64_t pco : grainCounts(s.outChans, m.outGrain, tiles / (pg * pb * ph)))
            for (std::uint64_t pci : grainCounts(s.inChans, m.inGrain, tiles / (pg * pb * ph * pco))) {
              // A group's channels are split only when each block holds one
              // group (a block's channels stay contiguous in the tensors).
              if ((pci > 1 || pco > 1) && pg != s.groups) continue;
              // Split input channels with split output channels would gather
              // every output position's channel block as its own piece (a
              // copy region each, whose cost the estimate does not see): not
              // considered.
              if (!wu && pci > 1 && pco > 1) continue;
              // The VMAC takes one output channel per group; a split of its
              // input channels (partials reduced over tiles) is not modelled.
              if (m.method == ConvMethod::VerticalMac && (pco > 1 || pci > 1)) continue;
              ConvPlan p;
              p.pg = pg, p.pb = pb, p.ph = ph, p.pci = pci, p.pco = pco;
              p.method = m.method, p.groupsPerVector = m.groupsPerVector;
              p.cost = estimateConv(s, p, target);
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
