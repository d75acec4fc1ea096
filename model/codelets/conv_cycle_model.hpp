#pragma once
// Timing of the convolution and pooling vertices, transcribed from PopLibs
// (graphcore/poplibs, mk2-main):
//   - ConvPartialnx1 (forward and input-gradient partials on the AMP):
//     lib/poplin/PerformanceEstimation.hpp getConvPartialnx1InnerLoopCycleEstimate
//     (the planner's form: one worklist per worker, the same for every kernel
//     position), getConvPartialnx1SupervisorInnerLoopCycleEstimateHalfFloat,
//     getConvPartialnx1WorkerCycles, getConvPartialnx1SupervisorOuterLoopCycleEstimateHalfFloat,
//     plus estimateZeroSupervisorCycles (the vertex zeroes its partials first),
//     as lib/poplin/ConvModel.cpp addPartialCalcCycleEstimate adds them;
//     the worker split is lib/poplin/ConvUtilInternal.cpp partitionConvPartialByWorker.
//   - Pooling (popnn MaxPooling / SumPooling / MaxPoolingGrad): the planner's
//     estimate lib/popnn/PoolVertices.cpp poolVertexCycleEstimate ->
//     lib/popnn/PerformanceEstimation.hpp getPoolingCycles (planningEstimates),
//     with the worker split of partitionPartialByContext.
// Float or half activations, float or half partials.
#include "model/ir/types.hpp"
#include "model/target.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::model::cycles {

// --- ConvPartialnx1 --------------------------------------------------------
inline constexpr ir::Cycles kNx1SupervisorOverhead = 109;        // convNx1Overhead()
inline constexpr ir::Cycles kNx1WorkerRetentionSavings = 9;      // convnx1WorkerRetentionSavings
inline constexpr ir::Cycles kNx1ZeroRetentionSavingsFloat = 9;   // zeroPartialsRetentionSavings(float partials)
inline constexpr ir::Cycles kNx1ZeroRetentionSavingsHalf = 10;   // zeroPartialsRetentionSavings(half partials)
inline constexpr ir::Cycles kNx1ZeroLoopOutGroupCycles = 17;     // zero loop: 17 per out group,
inline constexpr ir::Cycles kNx1BranchStallCycles = 6;           //   6 per brnzdec taken
inline constexpr ir::Cycles kNx1ConvGroupOverhead = 16;
inline constexpr ir::Cycles kNx1InGroupOverhead = 14;
inline constexpr ir::Cycles kNx1OutGroupOverhead = 14;
inline constexpr ir::Cycles kNx1KernelOuterOverhead = 14;        // per kernel row (ky)
inline constexpr ir::Cycles kNx1KernelInnerOverhead = 17 - 5;    // per kernel column (kx)
inline constexpr ir::Cycles kNx1FilterHeight1LoadCycles = 15;    // "additional load cycles", filterHeight 1
inline constexpr ir::Cycles kNx1InnermostExtraCycles = 3;
inline constexpr ir::Cycles kNx1WorkerStartCycles = 17;          // to <PartitionLoop>, float partials (+1 half)
inline constexpr ir::Cycles kNx1WorkerEntryCycles = 3;           // per worklist entry (tripack pointer)
inline constexpr ir::Cycles kNx1WorkerEmptyCycles = 17;          // entry of 0 elements
inline constexpr ir::Cycles kNx1WorkerOneElementCycles = 33;     // float activations
inline constexpr ir::Cycles kNx1WorkerTwoElementsCycles = 44;
inline constexpr ir::Cycles kNx1WorkerManyElementsCycles = 45;   // + coreCycles (8) per element beyond 3
// Half activations: 1, 2 (+1 with half partials on 16 conv units or float
// partials on 8: one more special stride), >= 3 elements (+ 4 per element beyond 3).
inline constexpr ir::Cycles kNx1HalfWorkerOneElementCycles = 29;
inline constexpr ir::Cycles kNx1HalfWorkerTwoElementsCycles = 33;
inline constexpr ir::Cycles kNx1HalfWorkerManyElementsCycles = 34;
inline constexpr ir::Cycles kNx1WorkerSyncCycles = 9;            // max(maxWorker, minWorker + 9)
// Zeroing partials (getZeroSupervisorVertexCycleEstimate, float): per worker
// ceil(elements / 2) + 14 - retention savings, times contexts and groups.
inline constexpr ir::Cycles kZeroWorkerOverheadFloat = 14;

// Output positions of a tile's partial (batch x outH x outW) split over
// `contexts` workers as partitionConvPartialByWorker does: elements
// [i n / c, (i + 1) n / c) of the active positions (every outputStride-th
// position, outputStride = inputDilation / gcd(inputDilation, stride)), cut
// at row ends. Returns per worker the number of positions of each row piece.
std::vector<std::vector<std::uint64_t>> convWorkerPartition(std::uint64_t batch, std::uint64_t outH,
                                                            std::uint64_t outW, std::uint64_t contexts,
                                                            std::uint64_t outputStrideH, std::uint64_t outputStrideW);

// Zeroing a vertex's partials before its first pass (estimateZeroSupervisorCycles
// -> getZeroSupervisorVertexCycleEstimate): `field` positions of
// `outChansPerGroup` channels in each of `groups` (output groups x conv
// groups), each worker ceil(field x outChansPerGroup / contexts) elements
// per group, counted as floats whatever the partials' type (PopLibs passes
// isFloat = true).
ir::Cycles zeroPartialsCycles(std::uint64_t field, std::uint64_t outChansPerGroup, std::uint64_t groups,
                              const Target& target);

struct Nx1Shape {
  // inChans, outChans: per conv group; convGroups of them one after another
  // (poplin's numConvGroups: AMP vertices take a conv-group grouping of 1).
  std::uint64_t batch = 1, outH = 1, outW = 1, inChans = 1, outChans = 1, kernelH = 1, kernelW = 1;
  std::uint64_t convGroups = 1;
  std::uint64_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;  // conv stride, input dilation
  bool zeroPartials = true;
  ir::DType inputType = ir::DType::Float, partialsType = ir::DType::Float;
};
// Tile cycles of one ConvPartialnx1 vertex.
ir::Cycles convPartialnx1Cycles(const Nx1Shape& s, const Target& target);

// --- Pooling (popnn) ---------------------------------------------------------
inline constexpr ir::Cycles kPoolSupervisorOverhead = 7 + 6;    // supervisor overhead + br $lr
inline constexpr ir::Cycles kPoolUnpackCost = 2;                 // defaultUnpackCosts (planning)
inline constexpr ir::Cycles kPoolWorkerStartCycles = 4 + 2 + 2 + 7 + 2;
inline constexpr ir::Cycles kPoolInitLoopOverhead = 4;
inline constexpr ir::Cycles kPoolRowsSetupCycles = 5 + 1;
inline constexpr ir::Cycles kPoolRowLoopCycles = 13;
inline constexpr ir::Cycles kPoolWorkLoopCycles = 20;
inline constexpr ir::Cycles kPoolChannelLoopCycles = 2 + 1;
inline constexpr ir::Cycles kPoolFwdMaxRptCycles = 4, kPoolFwdSumRptCycles = 5, kPoolBwdRptCycles = 7;
inline constexpr ir::Cycles kPoolFwdCyclesPerElement = 3, kPoolBwdCyclesPerElement = 5;

enum class PoolKind { Max, Sum, MaxGrad };
struct PoolShape {
  std::uint64_t batch = 1, outH = 1, outW = 1, chans = 1, kernelH = 1, kernelW = 1;
  ir::DType type = ir::DType::Float;
};
// Tile cycles of one pooling vertex over `batch` images of outH x outW
// outputs, `chans` channels (one channel group of 64-bit vectors: 2 floats
// or 4 halves).
ir::Cycles poolingCycles(PoolKind kind, const PoolShape& s, const Target& target);

}  // namespace ipusim::model::cycles
