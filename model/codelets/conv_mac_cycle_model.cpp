#include "model/codelets/conv_mac_cycle_model.hpp"

#include "model/codelets/conv_cycle_model.hpp"
#include "model/codelets/cycle_model.hpp"

#include <numeric>
#include <vector>

namespace ipusim::model::cycles {
namespace {

std::uint64_t ceilLog2(std::uint64_t n) {
  std::uint64_t l = 0;
  while ((std::uint64_t(1) << l) < n) ++l;
  return l;
}

// The rows of one worker (PopLibs' planner form, estimate*InnerLoopCycles):
// `rows` rows split over the contexts, a row cut in rowSplitFactor parts
// when the rows do not divide evenly; returns the worker's whole rows and
// its part rows.
struct WorkerRows {
  std::uint64_t splitFactor, whole, parts;
};
WorkerRows workerRows(std::uint64_t rows, std::uint64_t contexts) {
  const std::uint64_t splitFactor = contexts / std::gcd(contexts, rows);
  const std::uint64_t maxPartRows = ceilDiv(rows * splitFactor, contexts);
  return {splitFactor, maxPartRows / splitFactor, maxPartRows % splitFactor};
}

// getConvPartialHorizontalMacCycleEstimate: one worker, one kernel position.
ir::Cycles hmacWorkerCycles(const std::vector<std::uint64_t>& convSizes, std::uint64_t inChansPerGroup,
                            std::uint64_t outChansPerGroup, bool floatActs, bool floatPartials, bool use1x1,
                            const Target& target) {
  const ir::Cycles retention = use1x1 ? kHmac1x1WorkerRetentionSavings : floatActs ? 0 : kHmacHalfWorkerRetentionSavings;
  ir::Cycles c = kHmacWorkerStartCycles - retention;
  const std::uint64_t outChans = floatPartials ? outChansPerGroup : ceilDiv(outChansPerGroup, 2);
  const ir::Cycles dot = hmacDotProductCycles(inChansPerGroup, floatActs, floatPartials, target);
  for (std::uint64_t n : convSizes) {
    if (n == 0) {
      c += kHmacEmptyRowCycles;
      continue;
    }
    c += use1x1 ? kHmac1x1RowCycles : kHmacRowCycles;
    if (use1x1 && outChans == 1) c += kHmac1x1WeightsPointerCycles + n * (kHmac1x1PositionCycles + dot);
    else c += n * (kHmacPositionCycles + outChans * dot);
  }
  return c;
}

// getVerticalMacDotProductCycles.
ir::Cycles vmacDotCycles(std::uint64_t size, std::uint64_t channels) {
  if (channels >= 8) return kVmacDotOverhead + 3 * (size - 1) * (channels / 8);
  return kVmacDotOverhead + 2 * (size - 1) * (channels / 4);
}

}  // namespace

ir::Cycles hmacDotProductCycles(std::uint64_t size, bool floatActs, bool floatPartials, const Target& target) {
  const std::uint64_t perVector = elementsPerVector(target, floatActs ? ir::DType::Float : ir::DType::Half);
  const bool halfHalf = !floatActs && !floatPartials;
  const ir::Cycles outChans = halfHalf ? 2 : 1;
  const ir::Cycles inner = kDotRptCycles * outChans + (halfHalf ? 1 : 0) + kDotAccumulateCycles + kDotBranchCycles;
  // The widest width (a power of two up to the vector) that divides the size.
  for (std::uint64_t width = std::uint64_t(1) << ceilLog2(perVector);; width /= 2)
    if (size % width == 0) {
      const ir::Cycles perWidth = width >= perVector ? 1 : 2;
      const ir::Cycles additional = width < perVector ? outChans : 0;
      return inner + additional + (size / width) * perWidth - (floatActs ? 0 : 1);
    }
}

ir::Cycles convPartialHorizontalMacCycles(const HmacShape& s, const Target& target) {
  const std::uint64_t contexts = target.tile.workerContexts;
  const bool floatActs = s.inputType == ir::DType::Float, floatPartials = s.partialsType == ir::DType::Float;
  const bool use1x1 = !floatActs && floatPartials && s.batch == 1 && s.kernelH * s.kernelW == 1 && s.outH == 1 &&
                      s.dilationH == s.strideH && s.dilationW == s.strideW;
  // One input-channel group of all the block's channels (poplin's grain: 2 halves).
  const std::uint64_t inChansPerGroup = floatActs ? s.inChans : ceilDiv(s.inChans, 2) * 2;
  const std::uint64_t inGroups = 1;
  const std::uint64_t outChansPerGroup = floatPartials ? 1 : 2;
  const std::uint64_t outGroups = ceilDiv(s.outChans, outChansPerGroup);
  // estimateConvPartialHorizontalMacInnerLoopCycles: the active rows (rows
  // not skipped by the input dilation) split over the workers.
  const std::uint64_t activeRows = s.batch * ceilDiv(s.outH, s.dilationH);
  const WorkerRows w = workerRows(activeRows, contexts);
  const std::uint64_t rowSize = ceilDiv(s.outW, s.dilationW);
  std::vector<std::uint64_t> convSizes;
  if (rowSize) {
    convSizes.assign(w.whole, rowSize);
    if (w.parts) convSizes.push_back(w.parts * (rowSize + w.splitFactor - 1) / w.splitFactor);
  }
  const ir::Cycles perPosition =
      hmacWorkerCycles(convSizes, inChansPerGroup, outChansPerGroup, floatActs, floatPartials, use1x1, target);
  // One worker's partition stands for all: the slowest is that worker.
  const ir::Cycles inner = contexts * (s.kernelH * s.kernelW * perPosition + kHmacWorkerNonLoopOverhead);
  // The outer loop; PopLibs passes floatPartials as convHzmacWorkerRetentionSavings's floatActivations here.
  const ir::Cycles overhead = (floatActs ? kHmacOverheadFloat : kHmacOverheadHalf) - (use1x1 ? kHmac1x1OverheadSavings : 0);
  const ir::Cycles supervisorRetention =
      use1x1 ? kHmac1x1WorkerRetentionSavings : floatPartials ? 0 : kHmacHalfWorkerRetentionSavings;
  const ir::Cycles outer =
      overhead + contexts * (floatPartials ? kHmacZeroRetentionSavingsFloat : kHmacZeroRetentionSavingsHalf) +
      contexts * supervisorRetention +
      s.convGroups * (kHmacConvGroupOverhead +
                      inGroups * (kHmacInGroupOverhead + outGroups * (kHmacOutGroupOverhead + inner)));
  const bool nonZeroing1x1 = use1x1 && inGroups == 1 && outChansPerGroup == 1;
  if (!s.zeroPartials || nonZeroing1x1) return outer;
  return outer + zeroPartialsCycles(activeRows * s.outW, outChansPerGroup, outGroups * s.convGroups, target);
}

ir::Cycles convPartialVerticalMacCycles(const VmacShape& s, const Target& target) {
  const std::uint64_t contexts = target.tile.workerContexts;
  const bool floatPartials = s.partialsType == ir::DType::Float;
  const std::uint64_t groupsPerGroup = s.convGroupsPerGroup;
  // estimateConvPartialVerticalMacInnerLoopCycles: every output position a
  // row of kernelW taps, per kernel row; one worker's share.
  const WorkerRows w = workerRows(s.outH * s.outW * s.batch, contexts);
  std::vector<std::uint64_t> convSizes;
  for (std::uint64_t k = 0; k < s.kernelH; ++k) {
    for (std::uint64_t r = 0; r < w.whole; ++r) convSizes.push_back(s.kernelW);
    for (std::uint64_t r = 0; r < w.parts; ++r) convSizes.push_back(ceilDiv(s.kernelW, w.splitFactor));
  }
  ir::Cycles worker = 0;
  if (groupsPerGroup >= 8 && !floatPartials) {
    ir::Cycles per8 = 0;
    for (std::uint64_t n : convSizes) per8 += kVmacWideEntryCycles + vmacDotCycles(n, 8);
    worker = (groupsPerGroup == 8 ? kVmacWide8Cycles : kVmacWide16Cycles) + per8 * (groupsPerGroup == 8 ? 1 : 2);
  } else {
    worker = floatPartials ? kVmacWorkerFloatPartials : kVmacWorkerHalfPartials;
    for (std::uint64_t n : convSizes)
      worker += kVmacEntryCycles + (floatPartials ? kVmacStoreReloadFloat : kVmacStoreReloadHalf) +
                vmacDotCycles(n, groupsPerGroup);
  }
  const ir::Cycles inner = contexts * worker;  // one worker's partition stands for all
  const std::uint64_t outElements = s.outH * s.outW;
  const ir::Cycles zero = kVmacZeroOverhead + ceilDiv(outElements, floatPartials ? 2 : 4);
  const std::uint64_t perWorker = ceilDiv(outElements, contexts);
  const ir::Cycles reduction =
      kVmacReductionOverhead - (floatPartials ? 1 : 0) +
      (kVmacReductionPerElement + (floatPartials ? 2 : 0) + (floatPartials ? 2 : 1) * (contexts - 1)) * perWorker /
          groupsPerGroup;
  const std::uint64_t convGroups = ceilDiv(s.convGroups, groupsPerGroup);
  const std::uint64_t inGroups = s.inChans;  // one input channel per group
  return kVmacSupervisorOverhead + kVmacWorkerInitCycles + kVmacRetentionInitCycles + (floatPartials ? 1 : 0) +
         (zero + kVmacConvGroupOverhead + inGroups * (kVmacInGroupOverhead + inner) + reduction) * convGroups;
}

}  // namespace ipusim::model::cycles
