#pragma once
// poplin's convolution vertex estimators, transcribed for the tests
// independently of the model's code (model/codelets/conv_*cycle_model.*),
// from graphcore/poplibs mk2-main lib/poplin/PerformanceEstimation.hpp in the
// planner's form lib/poplin/ConvModel.cpp addPartialCalcCycleEstimate uses:
// Mk2, 6 worker contexts, 64-bit vectors, 16 conv units, AMP weight loads
// of 32 cycles.
//   poplinNx1   ConvPartialnx1 (getConvPartialnx1InnerLoopCycleEstimate +
//               ...SupervisorOuterLoopCycleEstimateHalfFloat + estimateZeroSupervisorCycles);
//   poplin1x1   ConvPartial1x1Out, float (getConvPartial1x1SupervisorCycleEstimate);
//   poplinHmac  ConvPartialHorizontalMac (estimateConvPartialHorizontalMacInnerLoopCycles
//               + ...SupervisorOuterLoopCycleEstimate + estimateZeroSupervisorCycles);
//   poplinVmac  ConvPartialVerticalMac (estimateConvPartialVerticalMacInnerLoopCycles
//               + ...Zero/Reduction/OuterLoopCycleEstimate).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

namespace ipusim::testing::poplin {

using U = std::uint64_t;
inline constexpr U kContexts = 6;

// partitionConvPartialByWorker (2-D), returning per context its row pieces' lengths.
inline std::vector<std::vector<U>> partition(U batch, U h, U w, U strideH, U strideW) {
  const U perRow = (w + strideW - 1) / strideW, rows = (h + strideH - 1) / strideH, n = batch * rows * perRow;
  std::vector<std::vector<U>> out(kContexts);
  for (U i = 0; i < kContexts; ++i)
    for (U e = i * n / kContexts; e < (i + 1) * n / kContexts;) {
      const U end = std::min((i + 1) * n / kContexts, (e / perRow + 1) * perRow);
      out[i].push_back(end - e);
      e = end;
    }
  return out;
}

// estimateZeroSupervisorCycles -> getZeroSupervisorVertexCycleEstimate(isFloat = true).
inline U zero(U field, U outChansPerGroup, U groups) {
  const U perWorker = (field * outChansPerGroup + kContexts - 1) / kContexts;
  return ((perWorker + 1) / 2 + 14 - 9) * kContexts * groups;
}

// ConvPartialnx1: float activations and partials, or half activations with
// half (halfPartials) or float partials; convGroups conv groups.
inline U poplinNx1(U batch, U outH, U outW, U inChans, U outChans, U kh, U kw, U outStrideH, U outStrideW,
                   bool half = false, bool halfPartials = false, U convGroups = 1) {
  const U convUnits = 16, outChansPerGroup = 16, inGroups = (inChans + (half ? 15 : 7)) / (half ? 16 : 8);
  const U outGroups = (outChans + outChansPerGroup - 1) / outChansPerGroup;
  U maxW = 0, minW = std::numeric_limits<U>::max();
  for (const auto& list : partition(batch, outH, outW, outStrideH, outStrideW)) {
    U c = 17 + (halfPartials ? 1 : 0);  // getConvPartialnx1WorkerCycles
    for (U n : list)
      c += 3 + (half ? (n == 1 ? 29 : n == 2 ? 33 + (halfPartials ? 1 : 0) : 34 + (n - 3) * 4)
                     : (n == 1 ? 33 : n == 2 ? 44 : 45 + (n - 3) * 8)) - 9;
    maxW = std::max(maxW, kContexts * c), minW = std::min(minW, kContexts * c);
  }
  const U passes = outChansPerGroup / convUnits;
  const U kernelLoop = std::max(maxW, minW + 9) * passes * kh * kw;
  const U innermost = 32 + 15 + 3;
  const U inner = kh * (14 + kw * (17 - 5 + passes * innermost)) + kernelLoop;
  const U outer = 109 + kContexts * 9 + kContexts * (halfPartials ? 10 : 9) +
                  convGroups * (outGroups * 17 + (outGroups - 1) * 6 + 1) + (convGroups - 1) * 6 + 1 +
                  convGroups * (16 + inGroups * (14 + outGroups * (14 + inner)));
  return outer + zero(batch * outH * outW, outChansPerGroup, outGroups * convGroups);
}

// ConvPartial1x1Out, float: field m split over the contexts, k input
// channels in groups of 8, n output channels in groups of 16, convGroups
// conv groups (float activations retain no worker state).
inline U poplin1x1(U m, U k, U n, U convGroups = 1) {
  const U inGroups = (k + 7) / 8, outGroups = (n + 15) / 16;
  auto innerLoop = [&](bool zeroing) {
    U maxW = 0, minW = std::numeric_limits<U>::max();
    for (U w = 0; w < kContexts; ++w) {
      const U elems = m / kContexts + (w < m % kContexts ? 1 : 0);
      const U z = zeroing ? 2 + 8 * std::max<U>(elems, 1) : 0;
      const U c = elems == 0 ? 24 : elems == 1 ? 47 + z : elems == 2 ? 46 + z : 46 + z + (elems - 3) * 8;
      maxW = std::max(maxW, kContexts * c), minW = std::min(minW, kContexts * c);
    }
    if (m < kContexts) minW = 0;
    return std::max(maxW, minW + 14);
  };
  const U numLoads = 32, common = 1;
  return 50 + convGroups * (12 + common +
                            (inGroups - 1) * (15 - common + 1 + outGroups * (19 + (6 + numLoads + innerLoop(false)))) +
                            (10 + 1 + outGroups * (19 - common + (7 + numLoads + innerLoop(true)))));
}

// getDenseDotProductCycles, 64-bit vectors.
inline U dot(U size, bool floatActs, bool floatPartials) {
  const U actsPer64Bits = floatActs ? 2 : 4;
  const bool halfHalf = !floatActs && !floatPartials;
  const U numOutChans = halfHalf ? 2 : 1;
  const U inner = 3 * numOutChans + (halfHalf ? 1 : 0) + 3 + 1;
  for (U width = actsPer64Bits;; width /= 2)
    if (size % width == 0)
      return inner + (width < actsPer64Bits ? numOutChans : 0) + (size / width) * (width >= actsPer64Bits ? 1 : 2) -
             (floatActs ? 0 : 1);
}

// ConvPartialHorizontalMac over a block of batch x outH x outW outputs,
// inChans (one input group) and outChans per conv group, convGroups groups,
// a kh x kw kernel, input dilation dH, dW (an input gradient's stride) and
// strides sH, sW.
inline U poplinHmac(U batch, U outH, U outW, U inChans, U outChans, U convGroups, U kh, U kw, U sH, U sW, U dH, U dW,
                    bool half, bool floatPartials) {
  const bool floatActs = !half;
  const bool use1x1 = half && floatPartials && batch == 1 && kh * kw == 1 && outH == 1 && dH == sH && dW == sW;
  const U inChansPerGroup = half ? (inChans + 1) / 2 * 2 : inChans;
  const U outChansPerGroup = floatPartials ? 1 : 2, numOutGroups = (outChans + outChansPerGroup - 1) / outChansPerGroup;
  // estimateConvPartialHorizontalMacInnerLoopCycles
  const U numOutRows = batch * ((outH + dH - 1) / dH);
  const U rowSplitFactor = kContexts / std::gcd(kContexts, numOutRows);
  const U maxPartRows = (numOutRows * rowSplitFactor + kContexts - 1) / kContexts;
  const U wholeRows = maxPartRows / rowSplitFactor, partRows = maxPartRows % rowSplitFactor;
  const U wholeRowConvSize = (outW + dW - 1) / dW;
  std::vector<U> convSizes;
  if (wholeRowConvSize) {
    convSizes.assign(wholeRows, wholeRowConvSize);
    if (partRows) convSizes.push_back(partRows * (wholeRowConvSize + rowSplitFactor - 1) / rowSplitFactor);
  }
  // getConvPartialHorizontalMacCycleEstimate per kernel position
  U worker = 16 - (use1x1 ? 15 : floatActs ? 0 : 6);
  const U numOutChans = floatPartials ? outChansPerGroup : (outChansPerGroup + 1) / 2;
  for (U n : convSizes) {
    if (n == 0) {
      worker += 7;
      continue;
    }
    worker += use1x1 ? 13 : 19;
    if (use1x1 && numOutChans == 1) worker += 1 + n * (2 + dot(inChansPerGroup, floatActs, floatPartials));
    else worker += n * (7 + numOutChans * dot(inChansPerGroup, floatActs, floatPartials));
  }
  const U inner = kContexts * (kh * kw * worker + 16);  // one context in the list: min is 0
  const U numInGroups = 1;
  const U outer = (floatActs ? 58 : 65) - (use1x1 ? 10 : 0) + kContexts * (floatPartials ? 9 : 10) +
                  kContexts * (use1x1 ? 15 : floatPartials ? 0 : 6) +
                  convGroups * (23 + numInGroups * (15 + numOutGroups * (10 + inner)));
  if (use1x1 && numInGroups == 1 && outChansPerGroup == 1) return outer;
  return outer + zero(numOutRows * outW, outChansPerGroup, numOutGroups * convGroups);
}

// ConvPartialVerticalMac (half activations): one input and one output channel
// per group, convGroupsPerGroup groups per vector.
inline U poplinVmac(U batch, U outH, U outW, U inChans, U convGroups, U convGroupsPerGroup, U kh, U kw,
                    bool floatPartials) {
  const U numRows = outH * outW * batch;
  const U rowSplitFactor = kContexts / std::gcd(kContexts, numRows);
  const U maxPartRows = (numRows * rowSplitFactor + kContexts - 1) / kContexts;
  const U wholeRows = maxPartRows / rowSplitFactor, partRows = maxPartRows % rowSplitFactor;
  std::vector<U> convSizes;
  for (U k = 0; k < kh; ++k) {
    for (U r = 0; r < wholeRows; ++r) convSizes.push_back(kw);
    for (U r = 0; r < partRows; ++r) convSizes.push_back((kw + rowSplitFactor - 1) / rowSplitFactor);
  }
  auto vdot = [](U size, U chans) { return 3 + (chans >= 8 ? 3 * (size - 1) * (chans / 8) : 2 * (size - 1) * (chans / 4)); };
  U worker = 0;
  if (convGroupsPerGroup >= 8 && !floatPartials) {
    U per8 = 0;
    for (U n : convSizes) per8 += 7 + 15 + vdot(n, 8);
    worker = (convGroupsPerGroup == 8 ? 13 : 25) + per8 * (convGroupsPerGroup == 8 ? 1 : 2);
  } else {
    worker = floatPartials ? 19 : 18;
    for (U n : convSizes) worker += 7 + (floatPartials ? 5 : 3) + vdot(n, convGroupsPerGroup);
  }
  const U inner = kContexts * worker;
  const U numOutElems = outH * outW;
  const U zeroCycles = 4 + (numOutElems + (floatPartials ? 1 : 3)) / (floatPartials ? 2 : 4);
  const U perWorker = (numOutElems + kContexts - 1) / kContexts;
  const U reduction = 10 - (floatPartials ? 1 : 0) +
                      ((7 + 2 * (floatPartials ? 1 : 0) + (floatPartials ? 2 : 1) * (kContexts - 1)) * perWorker /
                       convGroupsPerGroup);
  const U numConvGroups = (convGroups + convGroupsPerGroup - 1) / convGroupsPerGroup;
  return 61 + 14 + 25 + (floatPartials ? 1 : 0) +
         (zeroCycles + 32 + inChans * (24 + inner) + reduction) * numConvGroups;
}

}  // namespace ipusim::testing::poplin
