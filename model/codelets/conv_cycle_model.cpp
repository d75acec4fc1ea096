#include "model/codelets/conv_cycle_model.hpp"

#include "model/codelets/cycle_model.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace ipusim::model::cycles {

std::vector<std::vector<std::uint64_t>> convWorkerPartition(std::uint64_t batch, std::uint64_t outH,
                                                            std::uint64_t outW, std::uint64_t contexts,
                                                            std::uint64_t outputStrideH, std::uint64_t outputStrideW) {
  const std::uint64_t perRow = ceilDiv(outW, outputStrideW), rows = ceilDiv(outH, outputStrideH);
  const std::uint64_t n = batch * rows * perRow;
  std::vector<std::vector<std::uint64_t>> workers(contexts);
  for (std::uint64_t i = 0; i < contexts; ++i) {
    const std::uint64_t begin = i * n / contexts, end = (i + 1) * n / contexts;
    // Row pieces of [begin, end): a piece never crosses the end of a row.
    for (std::uint64_t e = begin; e < end;) {
      const std::uint64_t rowEnd = (e / perRow + 1) * perRow;
      const std::uint64_t pieceEnd = std::min(end, rowEnd);
      // The piece's x range is [first * s, last * s + 1): ceil of its width over the stride.
      workers[i].push_back(pieceEnd - e);
      e = pieceEnd;
    }
  }
  return workers;
}

namespace {

// getConvPartialnx1WorkerCycles.
ir::Cycles nx1WorkerCycles(const std::vector<std::uint64_t>& worklist, bool floatActs, bool floatPartials,
                           std::uint64_t convUnits) {
  const ir::Cycles core = floatActs ? kAmpFloatCyclesPerElement : kAmpHalfCyclesPerElement;
  const bool extraStride = !floatActs && ((!floatPartials && convUnits == 16) || (floatPartials && convUnits == 8));
  ir::Cycles c = kNx1WorkerStartCycles + (floatPartials ? 0 : 1);
  for (std::uint64_t n : worklist) {
    c += kNx1WorkerEntryCycles;
    switch (n) {
      case 0: c += kNx1WorkerEmptyCycles; break;
      case 1: c += floatActs ? kNx1WorkerOneElementCycles : kNx1HalfWorkerOneElementCycles; break;
      case 2: c += floatActs ? kNx1WorkerTwoElementsCycles : kNx1HalfWorkerTwoElementsCycles + extraStride; break;
      default: c += (floatActs ? kNx1WorkerManyElementsCycles : kNx1HalfWorkerManyElementsCycles) + (n - 3) * core;
    }
    c -= kNx1WorkerRetentionSavings;
  }
  return c;
}

}  // namespace

ir::Cycles convPartialnx1Cycles(const Nx1Shape& s, const Target& target) {
  const std::uint64_t contexts = target.tile.workerContexts;
  const bool floatActs = s.inputType == ir::DType::Float, floatPartials = s.partialsType == ir::DType::Float;
  const std::uint64_t convUnits = ampConvUnits(target, s.inputType);
  const std::uint64_t outChansPerGroup = convUnits;  // the AMP's partial channels per group
  const std::uint64_t inGroups =
      ceilDiv(s.inChans, floatActs ? kAmpFloatInputChannelsPerGroup : kAmpHalfInputChannelsPerGroup);
  const std::uint64_t outGroups = ceilDiv(s.outChans, outChansPerGroup);
  const std::uint64_t convGroups = s.convGroups;
  const std::uint64_t passes = outChansPerGroup / convUnits;
  // Weights per conv unit equal the input channels per group (8 floats or
  // 16 halves), so the conv unit's weight height (filterHeight) is 1.
  const std::uint64_t outStrideH = s.dilationH / std::gcd(s.dilationH, s.strideH);
  const std::uint64_t outStrideW = s.dilationW / std::gcd(s.dilationW, s.strideW);
  const auto partition = convWorkerPartition(s.batch, s.outH, s.outW, contexts, outStrideH, outStrideW);
  // Kernel loop: per kernel position and pass, the slowest worker (every
  // context's list counts, an empty one costs its start-up) or the fastest + 9.
  ir::Cycles maxWorker = 0, minWorker = std::numeric_limits<ir::Cycles>::max();
  for (const auto& worklist : partition) {
    std::vector<std::uint64_t> nonEmpty;
    for (std::uint64_t n : worklist)
      if (n) nonEmpty.push_back(n);
    const ir::Cycles c = contexts * nx1WorkerCycles(nonEmpty, floatActs, floatPartials, convUnits);
    maxWorker = std::max(maxWorker, c), minWorker = std::min(minWorker, c);
  }
  if (partition.size() < contexts) minWorker = 0;
  const ir::Cycles kernelLoop =
      std::max(maxWorker, minWorker + kNx1WorkerSyncCycles) * passes * s.kernelH * s.kernelW;
  const ir::Cycles innermost = kAmpWeightLoadCycles + kNx1FilterHeight1LoadCycles + kNx1InnermostExtraCycles;
  const ir::Cycles inner =
      s.kernelH * (kNx1KernelOuterOverhead + s.kernelW * (kNx1KernelInnerOverhead + passes * innermost)) + kernelLoop;
  const ir::Cycles outer =
      kNx1SupervisorOverhead + contexts * kNx1WorkerRetentionSavings +
      contexts * (floatPartials ? kNx1ZeroRetentionSavingsFloat : kNx1ZeroRetentionSavingsHalf) +
      convGroups * (outGroups * kNx1ZeroLoopOutGroupCycles + (outGroups - 1) * kNx1BranchStallCycles + 1) +
      (convGroups - 1) * kNx1BranchStallCycles + 1 +
      convGroups * (kNx1ConvGroupOverhead + inGroups * (kNx1InGroupOverhead + outGroups * (kNx1OutGroupOverhead + inner)));
  if (!s.zeroPartials) return outer;
  return outer + zeroPartialsCycles(s.batch * s.outH * s.outW, outChansPerGroup, outGroups * convGroups, target);
}

ir::Cycles zeroPartialsCycles(std::uint64_t field, std::uint64_t outChansPerGroup, std::uint64_t groups,
                              const Target& target) {
  const std::uint64_t contexts = target.tile.workerContexts;
  const std::uint64_t perWorker = ceilDiv(field * outChansPerGroup, contexts);
  const ir::Cycles zeroWorker =
      floatVectors(perWorker, target) + kZeroWorkerOverheadFloat - kNx1ZeroRetentionSavingsFloat;
  return zeroWorker * contexts * groups;
}

ir::Cycles poolingCycles(PoolKind kind, const PoolShape& s, const Target& target) {
  const std::uint64_t contexts = target.tile.workerContexts;
  const bool isMax = kind != PoolKind::Sum, bwd = kind == PoolKind::MaxGrad;
  // One channel group of all the tile's channels, in 64-bit vectors (popnn
  // requires whole vectors; a partial vector is rounded up: estimate).
  const std::uint64_t chansD = std::max<std::uint64_t>(1, vectors(s.chans, target, s.type));
  const std::uint64_t outSize = s.batch * s.outH * s.outW;
  const std::uint64_t initInfo = outSize / chansD;
  const std::uint64_t kernelPositions = s.kernelH * s.kernelW;
  const auto partition = convWorkerPartition(s.batch, s.outH, s.outW, contexts, 1, 1);
  ir::Cycles slowest = 0;
  for (std::uint64_t w = 0; w < contexts; ++w) {
    ir::Cycles c = kPoolWorkerStartCycles + kPoolUnpackCost;
    const std::uint64_t numElems = initInfo * chansD / contexts;
    const std::uint64_t extra = w < initInfo - numElems * contexts ? 1 : 0;
    c += kPoolInitLoopOverhead + numElems + extra;
    c += kPoolRowsSetupCycles + kPoolUnpackCost;
    const auto& rows = partition[w];
    if (rows.empty()) {
      slowest = std::max(slowest, c + 1);
      continue;
    }
    c += 2 + (isMax ? 1 : 2);
    if (bwd) c += 6 + 2 * kPoolUnpackCost;
    c += 3 + 2 + kPoolUnpackCost * 2 + 1;
    for (std::uint64_t width : rows) {
      c += kPoolRowLoopCycles;
      const std::uint64_t n = width - 1;  // the rpt count
      const ir::Cycles rpt = bwd ? kPoolBwdRptCycles + kPoolBwdCyclesPerElement * n
                             : isMax ? kPoolFwdMaxRptCycles + kPoolFwdCyclesPerElement * n
                                     : kPoolFwdSumRptCycles + kPoolFwdCyclesPerElement * n;
      c += kernelPositions * (kPoolWorkLoopCycles + 1 + chansD * (kPoolChannelLoopCycles + rpt) + 1 + 3);
      c += 2;
    }
    slowest = std::max(slowest, c + 1);
  }
  return kPoolSupervisorOverhead + slowest * contexts;
}

}  // namespace ipusim::model::cycles
