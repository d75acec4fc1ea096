#pragma once
// Timing of poplin's convolution vertices that do not use the AMP, which
// poplin's planner chooses for grouped and depthwise convolutions whose
// groups have too few channels to fill the AMP's conv units
// (lib/poplin/ConvVertexType.cpp getConvVertexHMACCandidates,
// getConvVertexVMACCandidates). Transcribed from graphcore/poplibs
// (mk2-main) lib/poplin/PerformanceEstimation.hpp, in the planner's form
// that lib/poplin/ConvModel.cpp addPartialCalcCycleEstimate uses (one
// worker's partition, the same for every kernel position):
//   - ConvPartialHorizontalMac (HMAC: dot products along the input channels
//     on a worker's vector unit): estimateConvPartialHorizontalMacInnerLoopCycles,
//     getConvPartialHorizontalMacSupervisorInnerLoopCycleEstimate,
//     getConvPartialHorizontalMacCycleEstimate, getDenseDotProductCycles,
//     getConvPartialHorizontalMacSupervisorOuterLoopCycleEstimate, plus
//     estimateZeroSupervisorCycles (conv_cycle_model.hpp zeroPartialsCycles);
//   - ConvPartialVerticalMac (VMAC: half activations only; one input and one
//     output channel per group, convGroupsPerGroup groups side by side in a
//     vector; each worker accumulates into its own copy of the partials,
//     reduced at the end): estimateConvPartialVerticalMacInnerLoopCycles,
//     getConvPartialVerticalMacCycleEstimate, getVerticalMacDotProductCycles,
//     getConvPartialVerticalMacSupervisorZeroInnerLoopCycleEstimate,
//     ...ReductionInnerLoopCycleEstimate, ...OuterLoopCycleEstimate.
#include "model/ir/types.hpp"
#include "model/target.hpp"

#include <cstdint>

namespace ipusim::model::cycles {

// --- ConvPartialHorizontalMac ----------------------------------------------
inline constexpr ir::Cycles kHmacOverheadFloat = 58;              // convHorizontalMacOverhead(float activations)
inline constexpr ir::Cycles kHmacOverheadHalf = 65;               //   (half activations)
inline constexpr ir::Cycles kHmac1x1OverheadSavings = 10;         //   - 10 with the 1x1 specialisation
inline constexpr ir::Cycles kHmacHalfWorkerRetentionSavings = 6;  // convHzmacWorkerRetentionSavings (half; float 0)
inline constexpr ir::Cycles kHmac1x1WorkerRetentionSavings = 15;  //   with the 1x1 specialisation
inline constexpr ir::Cycles kHmacZeroRetentionSavingsFloat = 9;   // zeroPartialsRetentionSavings(float partials)
inline constexpr ir::Cycles kHmacZeroRetentionSavingsHalf = 10;   //   (half partials)
inline constexpr ir::Cycles kHmacWorkerStartCycles = 16;          // getConvPartialHorizontalMacCycleEstimate
inline constexpr ir::Cycles kHmacEmptyRowCycles = 7;              //   per worklist entry of 0 positions
inline constexpr ir::Cycles kHmacRowCycles = 19;                  //   per entry (13 with the 1x1 specialisation)
inline constexpr ir::Cycles kHmac1x1RowCycles = 13;
inline constexpr ir::Cycles kHmacPositionCycles = 7;              //   per output position, + a dot product per channel
inline constexpr ir::Cycles kHmac1x1PositionCycles = 2;           //   (1x1, one output channel: + 1 per entry)
inline constexpr ir::Cycles kHmac1x1WeightsPointerCycles = 1;
inline constexpr ir::Cycles kHmacWorkerNonLoopOverhead = 16;      // ...SupervisorInnerLoopCycleEstimate
inline constexpr ir::Cycles kHmacConvGroupOverhead = 23;          // ...SupervisorOuterLoopCycleEstimate
inline constexpr ir::Cycles kHmacInGroupOverhead = 15;
inline constexpr ir::Cycles kHmacOutGroupOverhead = 10;
// getDenseDotProductCycles: per output channel processed (2 with half
// partials) 1 + 2 (rpt and wind down), + 1 format conversion for half
// partials, + 3 to add into the partials, + 1 branch; then one cycle per
// vector of the widest width dividing the size (two per vector narrower than
// 64 bits, plus one per channel), one less for half activations.
inline constexpr ir::Cycles kDotRptCycles = 1 + 2;
inline constexpr ir::Cycles kDotAccumulateCycles = 3;
inline constexpr ir::Cycles kDotBranchCycles = 1;

struct HmacShape {
  // The output field of a tile's block (batch x outH x outW), its input and
  // output channels per conv group, the conv groups, the kernel; the input
  // dilation (an input gradient's stride) and the stride.
  std::uint64_t batch = 1, outH = 1, outW = 1, inChans = 1, outChans = 1, convGroups = 1;
  std::uint64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  bool zeroPartials = true;
  ir::DType inputType = ir::DType::Float, partialsType = ir::DType::Float;
};
// getDenseDotProductCycles: a dot product of `size` activations.
ir::Cycles hmacDotProductCycles(std::uint64_t size, bool floatActivations, bool floatPartials, const Target& target);
// Tile cycles of one ConvPartialHorizontalMac vertex: one input-channel
// group of all its input channels (rounded up to 2 for half activations:
// poplin's grain), output channels in groups of 1 (float partials) or 2
// (half partials); the 1x1 specialisation (half activations, float
// partials) where poplin's canUse1x1Vertex holds (batch 1, a 1x1 kernel,
// one output row, input dilation equal to the stride).
ir::Cycles convPartialHorizontalMacCycles(const HmacShape& s, const Target& target);

// --- ConvPartialVerticalMac --------------------------------------------------
inline constexpr ir::Cycles kVmacSupervisorOverhead = 61;          // supOverheadCycles
inline constexpr ir::Cycles kVmacWorkerInitCycles = 14;            // wkrCoreVMACInit
inline constexpr ir::Cycles kVmacRetentionInitCycles = 25;         // wkrStateRetentionInit (+1 float partials)
inline constexpr ir::Cycles kVmacConvGroupOverhead = 32;           // outerLoopCycles: 32 + per in group 24
inline constexpr ir::Cycles kVmacInGroupOverhead = 24;
inline constexpr ir::Cycles kVmacZeroOverhead = 4;                 // zero: 4 + ceil(out / (2 float | 4 half))
inline constexpr ir::Cycles kVmacReductionOverhead = 10;           // reduction: 10 - floatPartials + ...
inline constexpr ir::Cycles kVmacReductionPerElement = 7;          //   (7 + 2 floatPartials + rpt (workers - 1)) per element
// getConvPartialVerticalMacCycleEstimate, per worker: 4 groups per group
// (or float partials): 19 (18 half partials) + per entry 7 + 5 (3 half
// partials) to store and reload the accumulators + the dot product; 8 or 16
// groups with half partials: 13 (25 for 16) + per entry and 8 groups 7 + 15 + dot.
inline constexpr ir::Cycles kVmacWorkerFloatPartials = 19, kVmacWorkerHalfPartials = 18;
inline constexpr ir::Cycles kVmacEntryCycles = 7;
inline constexpr ir::Cycles kVmacStoreReloadFloat = 5, kVmacStoreReloadHalf = 3;
inline constexpr ir::Cycles kVmacWide8Cycles = 13, kVmacWide16Cycles = 25;
inline constexpr ir::Cycles kVmacWideEntryCycles = 7 + 15;
// getVerticalMacDotProductCycles: 3 + per kernel column after the first 3
// per 8 channels (>= 8), else 2 per 4.
inline constexpr ir::Cycles kVmacDotOverhead = 3;

struct VmacShape {
  // The output field of a tile's block, its input channels per conv group
  // (one input-channel group each), the conv groups and how many share a
  // vector (4, or 8 and 16 with half partials), the kernel.
  std::uint64_t batch = 1, outH = 1, outW = 1, inChans = 1, convGroups = 1, convGroupsPerGroup = 4;
  std::uint64_t kernelH = 1, kernelW = 1;
  ir::DType partialsType = ir::DType::Float;
};
// Tile cycles of one ConvPartialVerticalMac vertex (half activations). As
// PopLibs, the zeroing and the reduction count the output field without
// its batch.
ir::Cycles convPartialVerticalMacCycles(const VmacShape& s, const Target& target);

}  // namespace ipusim::model::cycles
