#pragma once
// The codelets' timing vocabulary: every constant a cycles() formula uses,
// named, with the one-line reason for its value. Tests compute the expected
// cycle counts from these same names, so a change here is a deliberate change
// of the model, not a silent drift.
//
// Conventions (PopLibs style, see graphcore/poplibs lib/popops/
// PerformanceEstimation.cpp `basicOpLoopCycles` and popopsCycleEstimators.hpp
// `OpPerformanceInfo`): a worker codelet costs
//   fixed vertex overhead + per-row overhead x rows
//   + ceil(elements / vectorWidth) x cyclesPerVector
// in ONE worker context's cycles (the tile runs 6 contexts interleaved; the
// executor multiplies by the context count). vectorWidth for float is the
// 64-bit datapath: Target::tile.vectorBytes / 4 = 2 floats.
#include "model/target.hpp"
#include "model/ir/types.hpp"

#include <cstdint>

namespace ipusim::model::cycles {

// --- Elementwise vertices, as PopLibs' 2D worker vertices ------------------
// Each constant below is read from graphcore/poplibs (mk2-main) and
// tests/model/test_codelet_poplibs_estimates.cpp re-derives every codelet's
// cycles from the PopLibs formula it names.
// UnaryOp2D: `cycles = 20` + per region ceil(n / 2) x cyclesPerLoop
// (lib/popops/popopsCycleEstimators.cpp UnaryOp2D, unaryOpInnerLoopCycles;
// float entries of unaryOpPerfInfo in popopsCycleEstimators.hpp are
// {cyclesPerLoop, false, unroll 2}).
inline constexpr ir::Cycles kUnaryOpVertexOverhead = 20;
inline constexpr ir::Cycles kReluCyclesPerVector = 3;    // RELU FLOAT {3, false, 2}
inline constexpr ir::Cycles kNegCyclesPerVector = 2;     // NEGATE FLOAT {2, false, 2}
inline constexpr ir::Cycles kSquareCyclesPerVector = 2;  // SQUARE FLOAT {2, false, 2}
// BinaryOp2D: `cycles = 5` + per region binaryOpInnerLoopCycles: ADD, SUBTRACT,
// MULTIPLY FLOAT are {1, true} on the natural vector (2 floats) plus 2 cycles
// of load/store and loop decision for these assembly codelets
// (hasExternalCodelet); DIVIDE FLOAT is {10, false, 2}.
inline constexpr ir::Cycles kBinaryOpVertexOverhead = 5;
inline constexpr ir::Cycles kAddSubMulCyclesPerVector = 1 + 2;
// AddBias as one worker of BroadcastVectorOuterByRow1D ADD FLOAT
// (popopsCycleEstimators.cpp BroadcastVectorOuterCycleEstimate): 15 per
// worker call, 7 per row (outer loop overhead, not misaligned), and per
// vector broadcastOpPerfInfo ADD FLOAT {1, true} + 1 inner-loop overhead.
inline constexpr ir::Cycles kBroadcastVertexOverhead = 15;
inline constexpr ir::Cycles kBroadcastRowOverhead = 7;
inline constexpr ir::Cycles kBroadcastAddCyclesPerVector = 1 + 1;
// Cast INT -> FLOAT as Cast2D (lib/popops/PerformanceEstimation.cpp
// getCast2DCycleEstimate: 5 + 11 per region + castWorkerCycles' 19-cycle
// prologue), then kIntToFloatCyclesPerElement per element.
inline constexpr ir::Cycles kCastVertexOverhead = 5 + 11 + 19;
// Copy: Poplar's on-tile copy has no PopLibs estimator; it is costed as the
// same-type cast FLOAT -> FLOAT of Cast2D (the same prologue, then one
// cycle per 64-bit vector on the aux pipeline, plus the remainder check).
inline constexpr ir::Cycles kCopyVertexOverhead = 5 + 11 + 19 + 1;
// Fill FLOAT as Fill2d (getFill2DCycleEstimate with _fillCycleEstimate):
// 5 + (16 + 6 + 1) + 1 - 3 = 26, then one st64 per 2 floats.
inline constexpr ir::Cycles kFillVertexOverhead = 26;
// ReluGrad as popnn NonLinearityGrad2D RELU FLOAT (popnnCycleEstimators.cpp):
// 5 + 12 vertex state + per region 6 + 3 + 2 + 1 + the pipeline's 5 - 3,
// then getNonLinearityGradOpCycles(RELU) = 3 per vector.
inline constexpr ir::Cycles kNonLinearityGradVertexOverhead = 31;
// ScaledAdd FLOAT as ScaledAdd2D (popopsCycleEstimators.cpp
// ScaledArithmetic2DCycleEstimate, not memory constrained): 9 + 1 prologue,
// 15 per region, 5 inner-loop overhead, 3 cycles per vector.
inline constexpr ir::Cycles kScaledAddVertexOverhead = 9 + 1 + 15 + 5;
inline constexpr ir::Cycles kScaledAddCyclesPerVector = 3;

// Reductions, as popops' reduction vertices for FLOAT partials
// (lib/popops/reduction/CycleEstimationFunctions.cpp; one op cycle per
// 64-bit vector):
// - along a row (ReduceSum/Max axis 1), getCycleEstimateReduceAllRegionsContinuous:
//   rows x (cols / 2) + 12 per output row + 2 when cols is odd + 10 + 7 call/return (+1 update);
inline constexpr ir::Cycles kContinuousReduceOverhead = 10 + 7;
inline constexpr ir::Cycles kContinuousReduceRowOverhead = 12;
inline constexpr ir::Cycles kContinuousReduceOddTail = 2;
inline constexpr ir::Cycles kReduceUpdateCycles = 1;
// - down the columns (axis 0), getCyclesEstimateForStridedReduce with one
//   outer stride: 3 + 2 entry/exit, 6 + 5 loop setup, then per 64-bit group of
//   outputs 3 + loop completion (ADD 3, MAX 2) + store (2; update 5)
//   + 3 + (rows - 1).
inline constexpr ir::Cycles kStridedReduceOverhead = 3 + 2 + 6 + 5;
inline constexpr ir::Cycles kStridedReduceGroupOverhead = 3 + 3;
inline constexpr ir::Cycles kStridedReduceAddCompletion = 3;
inline constexpr ir::Cycles kStridedReduceMaxCompletion = 2;
inline constexpr ir::Cycles kStridedReduceStore = 2;
inline constexpr ir::Cycles kStridedReduceUpdateStore = 5;

// --- Per-vector costs shared by several vertices -----------------------------
// Cycles per 64-bit vector (2 floats) of the inner loop, by operation.
// A 64-bit load/store loop with the operation bundled, one vector per cycle
// (Copy as Cast2D FLOAT -> FLOAT, Fill's st64 loop).
inline constexpr ir::Cycles kSimpleOpCyclesPerVector = 1;
// ReluGrad: popnn getNonLinearityGradOpCycles(RELU) = 3 per vector.
inline constexpr ir::Cycles kReluGradCyclesPerVector = 3;
// No vector divide: f32div is scalar, 10 cycles per loop of 2 floats (popops
// binaryOpPerfInfo DIVIDE FLOAT {10, false, 2}).
inline constexpr ir::Cycles kDivideCyclesPerVector = 10;
// Transcendental: f32exp is scalar, 6 cycles per loop of 2 floats (popops
// OpPerformanceInfo EXPONENT FLOAT {6, false, 2}).
inline constexpr ir::Cycles kExpCyclesPerVector = 6;
// f32ln, likewise scalar: 12 cycles per loop of 2 floats (popops
// unaryOpPerfInfo LOGARITHM FLOAT {12, false, 2}).
inline constexpr ir::Cycles kLogCyclesPerVector = 12;
// int -> float: not on the aux pipeline, one element per 2 cycles (popops
// castWorkerCycles: max(load, store) + 1 with an op vector width of 1).
inline constexpr ir::Cycles kIntToFloatCyclesPerElement = 2;

// Scalar results per softmax row: one reciprocal of the sum and one log for
// the loss. PopLibs' loops for these are unrolled by 2 (DIVIDE, LOGARITHM
// FLOAT {c, false, 2}): one element costs a whole loop, ceil(1 / 2) x c.
inline constexpr ir::Cycles kScalarReciprocalCycles = kDivideCyclesPerVector;
inline constexpr ir::Cycles kScalarLogCycles = kLogCyclesPerVector;
// Per row of a label-indexed codelet: load the label, bounds check, address
// (estimate: PopLibs has no vertex reading one label per row).
inline constexpr ir::Cycles kLabelLookupCycles = 4;
// SoftmaxCrossEntropyGrad as popnn's LossCrossEntropyTransform FLOAT
// (lib/popnn/PerformanceEstimation.hpp getLossTransformCycles: 5 + 6 + 5 + 2
// + 1 + 1 overhead, 9 cycles per element). PopLibs computes the loss and the
// gradient in that one vertex; ours splits them, and the gradient is charged
// the whole vertex.
inline constexpr ir::Cycles kLossTransformOverhead = 5 + 6 + 5 + 2 + 1 + 1;
inline constexpr ir::Cycles kLossTransformCyclesPerElement = 9;

// --- Supervisor: the AMP matrix product (MatMulPartial) --------------------
// poplin's ConvPartial1x1Out estimate for float activations and partials
// (lib/poplin/PerformanceEstimation.hpp,
// getConvPartial1x1SupervisorInnerLoopCycleEstimateHalfFloat and
// getConvPartial1x1SupervisorOuterLoopCycleEstimateHalfFloat), a matmul
// m x k x n being a 1x1 convolution of m field elements, k input and n
// output channels. The AMP has tile.ampFloatMacsPerCycle float conv units
// (16 Mk2, 8 Mk1), each taking kAmpFloatInputChannelsPerGroup input
// channels, so one field element of one group costs kAmpFloatCyclesPerElement
// worker cycles: MACs per cycle = conv units x 8 / 8.
inline constexpr std::uint64_t kAmpFloatInputChannelsPerGroup = 8;  // float weights per conv unit
inline constexpr ir::Cycles kAmpFloatCyclesPerElement = 8;           // "coreCycles" for float activations
// Worker cycles for 0, 1, 2 and >= 3 field elements (the >= 3 case adds
// kAmpFloatCyclesPerElement per element beyond 3), and when zeroing the
// partials 2 + zeroCyclesPerGroup per element (8 with 16 conv units, else 4).
inline constexpr ir::Cycles kAmpWorkerEmptyCycles = 24;
inline constexpr ir::Cycles kAmpWorkerOneElementCycles = 47;
inline constexpr ir::Cycles kAmpWorkerManyElementsCycles = 46;
inline constexpr ir::Cycles kAmpZeroingCycles = 2;
inline constexpr std::uint64_t kAmpWideConvUnits = 16;          // zeroCyclesPerGroup is 8 with 16 conv units,
inline constexpr ir::Cycles kAmpWideZeroCyclesPerElement = 8;   // else 4 (float partials)
inline constexpr ir::Cycles kAmpZeroCyclesPerElement = 4;
// The worker with the fewest cycles also carries 14 cycles of tagging.
inline constexpr ir::Cycles kAmpWorkerTagCycles = 14;
// Supervisor: 50 outside the loops; per conv group 12 (+1 on the float-
// partials path); per further input group 15 - 1 + 1; per output group 19
// (18 on the first pass) and per pass 6 (7 on the first); loading one
// group's weights into the conv units: conv units x 32 bytes / 16 bytes per
// cycle on Mk2 (ld128), / 8 on Mk1 = 32 cycles on both.
inline constexpr ir::Cycles kAmpSupervisorOverhead = 50;
inline constexpr ir::Cycles kAmpConvGroupOverhead = 12 + 1;
inline constexpr ir::Cycles kAmpFirstPassInGroupOverhead = 10 + 1;
inline constexpr ir::Cycles kAmpInGroupOverhead = 15 - 1 + 1;
inline constexpr ir::Cycles kAmpFirstPassOutGroupOverhead = 19 - 1 + 7;
inline constexpr ir::Cycles kAmpOutGroupOverhead = 19 + 6;
inline constexpr ir::Cycles kAmpWeightLoadCycles = 32;

inline constexpr std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// Floats per datapath vector. Throws std::invalid_argument if the target's
// vector is narrower than one float.
std::uint64_t floatsPerVector(const Target& target);
// ceil(elements / floatsPerVector).
std::uint64_t floatVectors(std::uint64_t elements, const Target& target);
// AMP float MACs per tile per cycle; throws std::invalid_argument if zero.
std::uint64_t ampFloatMacsPerCycle(const Target& target);
// Tile cycles of MatMulPartial (m x k) . (k x n) by the poplin estimate
// above; `zeroFirst`: the first input-channel pass zeroes the partials
// (false when accumulating into out).
ir::Cycles ampMatMulCycles(std::uint64_t m, std::uint64_t k, std::uint64_t n, bool zeroFirst,
                           const Target& target);

}  // namespace ipusim::model::cycles
