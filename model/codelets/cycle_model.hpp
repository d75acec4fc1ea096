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
// executor multiplies by the context count). vectorWidth is the 64-bit
// datapath: Target::tile.vectorBytes / sizeOf(type) = 2 floats or 4 halves.
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
inline constexpr ir::Cycles kSigmoidCyclesPerVector = 12;     // SIGMOID FLOAT {12, false, 2}
inline constexpr ir::Cycles kSigmoidHalfCyclesPerVector = 6;  // SIGMOID HALF {6, false, 4}
inline constexpr ir::Cycles kTanhCyclesPerVector = 12;        // TANH FLOAT {12, false, 2}
inline constexpr ir::Cycles kTanhHalfCyclesPerVector = 4;     // TANH HALF {4, false, 4}
inline constexpr ir::Cycles kSqrtCyclesPerVector = 10;        // SQRT FLOAT {10, false, 2}
inline constexpr ir::Cycles kSqrtHalfCyclesPerVector = 23;    // SQRT HALF {23, false, 4}
// GELU (exact, erf form) is popops' GELU_ERF unary op, a loop of one
// element: FLOAT {22, false, 1}, HALF {16, false, 1} (22 and 16 cycles per
// element; UnaryOp2D: 20 + n x that).
inline constexpr ir::Cycles kGeluCyclesPerElement = 22;
inline constexpr ir::Cycles kGeluHalfCyclesPerElement = 16;
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
// SigmoidGrad / TanhGrad (grad x out(1 - out), grad x (1 - out^2)) in the
// same NonLinearityGrad2D frame: popnn getNonLinearityGradOpCycles(SIGMOID)
// and (TANH) = 3 per vector, as RELU.
inline constexpr ir::Cycles kSigmoidTanhGradCyclesPerVector = 3;
// GeluGrad (grad x (Phi(x) + x phi(x))): popnn getNonLinearityGradOpCycles
// (GELU_ERF) = 30 per float vector, 15 per half vector (PopLibs marks them
// placeholders until the vertex is written in assembly; they are its figures).
inline constexpr ir::Cycles kGeluGradCyclesPerVector = 30;
inline constexpr ir::Cycles kGeluGradHalfCyclesPerVector = 15;
// No vector divide: f32div is scalar, 10 cycles per loop of 2 floats (popops
// binaryOpPerfInfo DIVIDE FLOAT {10, false, 2}).
inline constexpr ir::Cycles kDivideCyclesPerVector = 10;
// Transcendental: f32exp is scalar, 6 cycles per loop of 2 floats (popops
// OpPerformanceInfo EXPONENT FLOAT {6, false, 2}).
inline constexpr ir::Cycles kExpCyclesPerVector = 6;
// f32ln, likewise scalar: 12 cycles per loop of 2 floats (popops
// unaryOpPerfInfo LOGARITHM FLOAT {12, false, 2}).
inline constexpr ir::Cycles kLogCyclesPerVector = 12;
// Half forms (per vector of 4 halves; popops OpPerformanceInfo, the
// {cycles, vectorised, width} table): EXPONENT HALF {4, false, 4} (two
// f16v2exp), LOGARITHM HALF {4, false, 4} (two f16v2ln), DIVIDE HALF
// {21, false, 4}. The other half variants take their float entry's cost per
// 64-bit vector (f16v4 forms of the same instructions), at 4 halves a vector.
inline constexpr ir::Cycles kExpHalfCyclesPerVector = 4;
inline constexpr ir::Cycles kLogHalfCyclesPerVector = 4;
inline constexpr ir::Cycles kDivideHalfCyclesPerVector = 21;
// Dropout, estimate: one urand64 (64 random bits a cycle) then compare,
// select and scale, single-cycle f32v2/f16v4 operations, per 64-bit vector.
inline constexpr ir::Cycles kDropoutCyclesPerVector = 1 + 3;
// Gaussian noise (model/codelets/gaussian_noise.cpp): poprand's Normal vertex
// (lib/poprand/poprandCycleEstimators.cpp: 7 overhead + 3 per region, 2 per
// 64-bit vector: f32v2grand / f16v4grand and the axpby), then the add or the
// multiply as a BinaryOp (kAddSubMulCyclesPerVector), fused.
inline constexpr ir::Cycles kNormalVertexOverhead = 7 + 3;
inline constexpr ir::Cycles kGaussianNoiseCyclesPerVector = 2 + kAddSubMulCyclesPerVector;
// Batch normalization (model/codelets/batch_norm.cpp): popnn builds it from
// popops element-wise and broadcast ops (graphcore/poplibs
// lib/popnn/BatchNorm.cpp); ours fuses each group of those ops into one
// vertex. Estimates, per 64-bit vector, as the sum of the popops ops fused:
// - BatchNormStatistics (per channel): the mean's square (SQUARE), the
//   subtract and the epsilon add (2 binary ops), SQRT and a reciprocal
//   (DIVIDE), and the two moving averages as ScaledAdd's aX + bY.
inline constexpr ir::Cycles kBatchNormStatisticsCyclesPerVector =
    kSquareCyclesPerVector + 2 * kAddSubMulCyclesPerVector + kSqrtCyclesPerVector + kDivideCyclesPerVector +
    2 * kScaledAddCyclesPerVector;
// - BatchNormInvStdDev (per channel, inference: training=False reads the
//   moving variance): the epsilon add, SQRT and a reciprocal (DIVIDE).
inline constexpr ir::Cycles kBatchNormInvStdDevCyclesPerVector =
    kAddSubMulCyclesPerVector + kSqrtCyclesPerVector + kDivideCyclesPerVector;
// - BatchNormalise (per row, as BroadcastVectorOuterByRow): batchNormalise's
//   subtract mean, multiply by invStdDev, multiply by gamma, add beta.
inline constexpr ir::Cycles kBatchNormaliseCyclesPerVector = 4 * kBroadcastAddCyclesPerVector;
// - BatchNormInputGrad (per row): batchNormGradients' whitened x gammaDelta
//   (broadcast), its scaled subtraction (ScaledAdd), betaDelta's scaled
//   subtraction (broadcast) and the multiply by gamma x invStdDev (broadcast);
//   plus, per vertex, gamma x invStdDev over its columns (one binary op).
inline constexpr ir::Cycles kBatchNormInputGradCyclesPerVector = 3 * kBroadcastAddCyclesPerVector + kScaledAddCyclesPerVector;
// Layer normalization (model/codelets/layer_norm.cpp): popnn's layer norm is
// its group norm of one group (lib/popnn/LayerNorm.cpp, GroupNorm.cpp), popops
// reductions and broadcast ops; ours fuses them per row of n values.
// Estimates, as the sum of the popops ops fused:
// - LayerNormalise: per row, two continuous reductions (sum x, and sum x^2
//   as popops' SQUARE_ADD reduction), per vector of rows the statistics of
//   BatchNormStatistics without the moving averages (mean^2, subtract,
//   epsilon add, SQRT, DIVIDE), and per 64-bit vector of the row the
//   whitening's subtract mean and multiply by invStdDev (broadcast ops).
inline constexpr ir::Cycles kLayerNormStatisticsCyclesPerVector =
    kSquareCyclesPerVector + 2 * kAddSubMulCyclesPerVector + kSqrtCyclesPerVector + kDivideCyclesPerVector;
inline constexpr ir::Cycles kLayerNormaliseCyclesPerVector = 2 * kBroadcastAddCyclesPerVector;
// - LayerNormInputGrad: per row, two continuous reductions (sum g, sum g
//   whitened) after the product g whitened (a BinaryOp MULTIPLY), then per vector
//   popnn's normGradients: whitened x varDelta, a scaled subtraction
//   (ScaledAdd), meanDelta's subtraction and the multiply by invStdDev
//   (broadcast ops).
inline constexpr ir::Cycles kLayerNormInputGradCyclesPerVector =
    kAddSubMulCyclesPerVector + 3 * kBroadcastAddCyclesPerVector + kScaledAddCyclesPerVector;
// ADD INT: popops binaryOpPerfInfo {7, false, 1}, per element (the step counter).
inline constexpr ir::Cycles kIntAddCyclesPerElement = 7;
// int -> float: not on the aux pipeline, one element per 2 cycles (popops
// castWorkerCycles: max(load, store) + 1 with an op vector width of 1).
inline constexpr ir::Cycles kIntToFloatCyclesPerElement = 2;

// Scalar results per softmax row: one reciprocal of the sum and one log for
// the loss. PopLibs' loops for these are unrolled by 2 (DIVIDE, LOGARITHM
// FLOAT {c, false, 2}): one element costs a whole loop, ceil(1 / 2) x c.
inline constexpr ir::Cycles kScalarReciprocalCycles = kDivideCyclesPerVector;
inline constexpr ir::Cycles kScalarLogCycles = kLogCyclesPerVector;
// The optimizer's scalar work and its reductions (model/codelets/learning_rate.cpp,
// gradient_clipping.cpp), from popops' OpPerformanceInfo tables
// (popopsCycleEstimators.hpp, unaryOpPerfInfo / binaryOpPerfInfo):
//   a power b^p as exp(p log b) (LOGARITHM, MULTIPLY, EXPONENT; the optimizer
//   updates' bias corrections take it so too); COS FLOAT {2300, false} (a
//   software cosine); FLOOR, CEIL FLOAT {2, true}.
inline constexpr ir::Cycles kScalarPowerCycles = kScalarLogCycles + 1 + kExpCyclesPerVector;
inline constexpr ir::Cycles kScalarCosCycles = 2300;
inline constexpr ir::Cycles kScalarRoundCycles = 2;
// A sum of squares into one scalar, as popops' reduction vertex for
// SQUARE_ADD with one input region and a scalar output
// (lib/popops/reduction/CycleEstimationFunctions.cpp, getCyclesEstimateForReduce,
// SCALAR_OUTPUT_SINGLE_INPUT): 5 + 1 + 1 entry/exit, 8 + 11 setup, then per
// 2 vectors 2 cycles (1 per remaining element; 6 in all below 6 elements).
inline constexpr ir::Cycles kScalarReduceOverhead = 5 + 1 + 1 + 8 + 11;
inline constexpr ir::Cycles kScalarReduceCyclesPerTwoVectors = 2;
inline constexpr ir::Cycles kScalarReduceShortCycles = 6;
// Per row of a label-indexed codelet: load the label, bounds check, address
// (estimate: PopLibs has no vertex reading one label per row).
inline constexpr ir::Cycles kLabelLookupCycles = 4;
// SoftmaxCrossEntropyGrad as popnn's LossCrossEntropyTransform FLOAT
// (lib/popnn/PerformanceEstimation.hpp getLossTransformCycles: 5 + 6 + 5 + 2
// + 1 + 1 overhead, 9 cycles per element). PopLibs computes the loss and the
// gradient in that one vertex; ours splits them, and the gradient is charged
// the whole vertex.
inline constexpr ir::Cycles kLossTransformOverhead = 5 + 6 + 5 + 2 + 1 + 1;
// LossSumSquaredTransform (getLossTransformCycles, isSoftmax = false): 5
// vertex, 5 pointer loads, 5 base and shifts, 2 load-aheads, 1 repeat, 1
// exit; 4 cycles per float (per 2 halves; half adds 1 shift, 2 RMW and 6 for
// an odd size).
inline constexpr ir::Cycles kLossTransformSumSquaredOverhead = 5 + 5 + 5 + 2 + 1 + 1;
inline constexpr ir::Cycles kLossTransformSumSquaredCyclesPerElement = 4;
inline constexpr ir::Cycles kLossTransformCyclesPerElement = 9;

// --- Activations and activation-like layers ---------------------------------
// popnn has NonLinearity vertices for SWISH and GELU (the tanh form) with
// their own estimators (lib/popnn/popnnCycleEstimators.cpp NonLinearity2D,
// NonLinearityGrad2D; per-op cycles lib/popnn/PerformanceEstimation.hpp
// getNonLinearityOpCycles / getNonLinearityGradOpCycles, each for a scalar
// element and for a vector). Forward, per element and per 64-bit vector:
inline constexpr ir::Cycles kSwishOpCycles = 6, kSwishVectorCycles = 11;          // SWISH, float
inline constexpr ir::Cycles kSwishHalfOpCycles = 3, kSwishHalfVectorCycles = 5;   // SWISH, half
inline constexpr ir::Cycles kGeluTanhOpCycles = 10, kGeluTanhHalfOpCycles = 5;    // GELU, float / half (vector alike)
// Gradients, per vector (the NonLinearityGrad2D frame above):
inline constexpr ir::Cycles kSwishGradCyclesPerVector = 15, kSwishGradHalfCyclesPerVector = 9;  // SWISH
inline constexpr ir::Cycles kGeluTanhGradCyclesPerVector = 10, kGeluTanhGradHalfCyclesPerVector = 5;  // GELU
// popnn NonLinearity2D's fixed cycles for one region of an out-of-place
// vertex: 5 vertex + 2 + 5 + 2 pointer loads, then per region 4 + 1 + 2
// (64-bit alignment test; half adds 2 for the 32-bit test and 1 more here)
// + 2 (vectors, branch) + 1 (brnzdec), the remainder's checks (2; half 2 + 2).
// The formula is cycles::nonLinearity2DCycles below.
//
// Every other activation is no popnn or popops vertex (popops::map fuses its
// expression into a generated codelet PopLibs has no estimator for). Its
// estimate: one fused elementwise vertex in the UnaryOp2D frame
// (kUnaryOpVertexOverhead; gradients in the NonLinearityGrad2D frame) whose
// cost per 64-bit vector is the sum of the costs of the popops operations
// the formula takes, each read from popopsCycleEstimators.hpp
// (unaryOpPerfInfo, binaryOpPerfInfo) and turned into cycles per vector of 2
// floats or 4 halves: an entry {c, false, u} is c cycles per u elements,
// {c, true} c per vector (its load/store overhead paid once by the fused
// loop), {c, false} c per element. The operations:
inline constexpr ir::Cycles kArithCyclesPerVector = 1;        // ADD, SUBTRACT, MULTIPLY {1, true}, float and half
inline constexpr ir::Cycles kClampCyclesPerVector = 2;        // popops Clamp (clampCycles): 2 per 64-bit vector
inline constexpr ir::Cycles kMinMaxCyclesPerVector = 3;       // MINIMUM, MAXIMUM FLOAT {3, false, 2}
inline constexpr ir::Cycles kMinMaxHalfCyclesPerVector = 4;   //                 HALF {4, false, 4}
inline constexpr ir::Cycles kAbsCyclesPerVector = 2 * 1;      // ABSOLUTE FLOAT {1, false}: 1 per element
inline constexpr ir::Cycles kAbsHalfCyclesPerVector = 4 * 1;  //          HALF {1, false}
inline constexpr ir::Cycles kExpm1CyclesPerVector = 2 * 4;    // EXPONENT_MINUS_ONE FLOAT {4, false}: 4 per element
inline constexpr ir::Cycles kExpm1HalfCyclesPerVector = 5;    //                    HALF {5, true}
inline constexpr ir::Cycles kLog1pCyclesPerVector = 18;       // LOGARITHM_ONE_PLUS FLOAT and HALF {18, true}
// A piecewise function picks between its pieces with a compare and a
// select by the compare's mask: popnn's RELU gradient is exactly that
// (getNonLinearityGradOpCycles(RELU) = 3 per vector); each further bound
// adds a compare and an and of the masks (two single-cycle f32v2/f16v4 ops).
inline constexpr ir::Cycles kSelectCyclesPerVector = 3;
inline constexpr ir::Cycles kExtraBoundCyclesPerVector = 2;
// The sums, per vector (float / half where their ops differ):
//   softplus(x) = max(x, 0) + log1p(exp(-|x|)), the stable form:
//     ABSOLUTE + NEGATE + EXPONENT + LOGARITHM_ONE_PLUS + RELU + ADD
inline constexpr ir::Cycles kSoftplusCyclesPerVector = kAbsCyclesPerVector + kNegCyclesPerVector + kExpCyclesPerVector +
                                                       kLog1pCyclesPerVector + kReluCyclesPerVector + kArithCyclesPerVector;
inline constexpr ir::Cycles kSoftplusHalfCyclesPerVector = kAbsHalfCyclesPerVector + kNegCyclesPerVector +
                                                           kExpHalfCyclesPerVector + kLog1pCyclesPerVector +
                                                           kReluCyclesPerVector + kArithCyclesPerVector;
// Forward:
//   relu6 / ReLU(max_value): CLAMP(x, 0, max)
inline constexpr ir::Cycles kClippedReluCyclesPerVector = kClampCyclesPerVector;
//   leaky_relu: MULTIPLY (s x), select (x > 0)
inline constexpr ir::Cycles kLeakyReluCyclesPerVector = kArithCyclesPerVector + kSelectCyclesPerVector;
//   ReLU(max_value, negative_slope, threshold): SUBTRACT, MULTIPLY (s (x - t)), MINIMUM (x, max), select (x > t)
inline constexpr ir::Cycles kBoundedLeakyReluCyclesPerVector =
    2 * kArithCyclesPerVector + kMinMaxCyclesPerVector + kSelectCyclesPerVector;
inline constexpr ir::Cycles kBoundedLeakyReluHalfCyclesPerVector =
    2 * kArithCyclesPerVector + kMinMaxHalfCyclesPerVector + kSelectCyclesPerVector;
//   elu: EXPONENT_MINUS_ONE, MULTIPLY (alpha), select (x > 0); selu: one MULTIPLY more (scale)
inline constexpr ir::Cycles kEluCyclesPerVector = kExpm1CyclesPerVector + kArithCyclesPerVector + kSelectCyclesPerVector;
inline constexpr ir::Cycles kEluHalfCyclesPerVector =
    kExpm1HalfCyclesPerVector + kArithCyclesPerVector + kSelectCyclesPerVector;
//   softsign: ABSOLUTE, ADD (1), DIVIDE
inline constexpr ir::Cycles kSoftsignCyclesPerVector = kAbsCyclesPerVector + kArithCyclesPerVector + kDivideCyclesPerVector;
inline constexpr ir::Cycles kSoftsignHalfCyclesPerVector =
    kAbsHalfCyclesPerVector + kArithCyclesPerVector + kDivideHalfCyclesPerVector;
//   hard_sigmoid: MULTIPLY (slope), ADD (0.5), CLAMP (0, 1): the expression
//   popnn's HARD_SIGMOID maps (lib/popnn/HardSigmoid.cpp HardSigmoidExpr,
//   with Keras 2's slope 0.2) through popops::map, which has no estimator
inline constexpr ir::Cycles kHardSigmoidCyclesPerVector = 2 * kArithCyclesPerVector + kClampCyclesPerVector;
//   hard_silu: ADD (3), CLAMP (0, 6), MULTIPLY (1/6), MULTIPLY (x)
inline constexpr ir::Cycles kHardSiluCyclesPerVector = 3 * kArithCyclesPerVector + kClampCyclesPerVector;
//   mish: softplus, TANH, MULTIPLY (x)
inline constexpr ir::Cycles kMishCyclesPerVector = kSoftplusCyclesPerVector + kTanhCyclesPerVector + kArithCyclesPerVector;
inline constexpr ir::Cycles kMishHalfCyclesPerVector =
    kSoftplusHalfCyclesPerVector + kTanhHalfCyclesPerVector + kArithCyclesPerVector;
// Gradients (NonLinearityGrad2D frame), from the forward output y where it
// determines the derivative, else from the input x:
//   ClippedRelu (y): 0 < y < max: select with a second bound
inline constexpr ir::Cycles kClippedReluGradCyclesPerVector = kSelectCyclesPerVector + kExtraBoundCyclesPerVector;
//   LeakyRelu (y): y > 0 ? g : s g
inline constexpr ir::Cycles kLeakyReluGradCyclesPerVector = kSelectCyclesPerVector + kArithCyclesPerVector;
//   BoundedLeakyRelu (y): y > 0 ? (y < max ? g : 0) : s g
inline constexpr ir::Cycles kBoundedLeakyReluGradCyclesPerVector =
    kSelectCyclesPerVector + kExtraBoundCyclesPerVector + kArithCyclesPerVector;
//   Elu (y): y > 0 ? g : g (y + alpha); Selu: g scale, g (y + scale alpha)
inline constexpr ir::Cycles kEluGradCyclesPerVector = kSelectCyclesPerVector + 2 * kArithCyclesPerVector;
inline constexpr ir::Cycles kSeluGradCyclesPerVector = kSelectCyclesPerVector + 3 * kArithCyclesPerVector;
//   Softplus (y): g (1 - exp(-y)) = -g expm1(-y): NEGATE, EXPONENT_MINUS_ONE, MULTIPLY, SUBTRACT
inline constexpr ir::Cycles kSoftplusGradCyclesPerVector =
    kNegCyclesPerVector + kExpm1CyclesPerVector + 2 * kArithCyclesPerVector;
inline constexpr ir::Cycles kSoftplusGradHalfCyclesPerVector =
    kNegCyclesPerVector + kExpm1HalfCyclesPerVector + 2 * kArithCyclesPerVector;
//   Softsign (y): g (1 - |y|)^2: ABSOLUTE, SUBTRACT, SQUARE, MULTIPLY
inline constexpr ir::Cycles kSoftsignGradCyclesPerVector =
    kAbsCyclesPerVector + kSquareCyclesPerVector + 2 * kArithCyclesPerVector;
inline constexpr ir::Cycles kSoftsignGradHalfCyclesPerVector =
    kAbsHalfCyclesPerVector + kSquareCyclesPerVector + 2 * kArithCyclesPerVector;
//   HardSigmoid (y): 0 < y < 1 ? slope g : 0
inline constexpr ir::Cycles kHardSigmoidGradCyclesPerVector =
    kSelectCyclesPerVector + kExtraBoundCyclesPerVector + kArithCyclesPerVector;
//   HardSilu (x): x < -3: 0, x > 3: g, else g (2x + 3) / 6: two bounds, MULTIPLY, ADD, MULTIPLY
inline constexpr ir::Cycles kHardSiluGradCyclesPerVector =
    kSelectCyclesPerVector + kExtraBoundCyclesPerVector + 3 * kArithCyclesPerVector;
//   Mish (x): t = tanh(softplus(x)); g (t + x sigmoid(x) (1 - t^2)): softplus,
//   TANH, SIGMOID, SQUARE, SUBTRACT, three MULTIPLY, ADD
inline constexpr ir::Cycles kMishGradCyclesPerVector = kSoftplusCyclesPerVector + kTanhCyclesPerVector +
                                                       kSigmoidCyclesPerVector + kSquareCyclesPerVector +
                                                       5 * kArithCyclesPerVector;
inline constexpr ir::Cycles kMishGradHalfCyclesPerVector = kSoftplusHalfCyclesPerVector + kTanhHalfCyclesPerVector +
                                                           kSigmoidHalfCyclesPerVector + kSquareCyclesPerVector +
                                                           5 * kArithCyclesPerVector;
// Per-column (broadcast) vertices, in AddBias's BroadcastVectorOuterByRow
// frame (kBroadcastVertexOverhead, kBroadcastRowOverhead), their ops summed
// as above plus the frame's one cycle of inner-loop overhead per vector:
inline constexpr ir::Cycles kBroadcastLoopOverhead = 1;
//   PRelu: x > 0 ? x : alpha x (MULTIPLY, select)
inline constexpr ir::Cycles kPReluCyclesPerVector = kArithCyclesPerVector + kSelectCyclesPerVector + kBroadcastLoopOverhead;
//   PReluGrad (x): x > 0 ? g : x < 0 ? alpha g : 0 (MULTIPLY, select with a second bound)
inline constexpr ir::Cycles kPReluGradCyclesPerVector =
    kArithCyclesPerVector + kSelectCyclesPerVector + kExtraBoundCyclesPerVector + kBroadcastLoopOverhead;
//   Normalize: (x - mean) / stdDev (SUBTRACT, DIVIDE)
inline constexpr ir::Cycles kNormalizeCyclesPerVector = kArithCyclesPerVector + kDivideCyclesPerVector + kBroadcastLoopOverhead;
inline constexpr ir::Cycles kNormalizeHalfCyclesPerVector =
    kArithCyclesPerVector + kDivideHalfCyclesPerVector + kBroadcastLoopOverhead;
//   ScaleShift: x scale + shift (MULTIPLY, ADD)
inline constexpr ir::Cycles kScaleShiftCyclesPerVector = 2 * kArithCyclesPerVector + kBroadcastLoopOverhead;
// PReLU's alpha gradient term, per element x < 0 ? x g : 0 (MULTIPLY,
// select), in the NonLinearityGrad2D frame; the sum over the shared axes
// and the batch is a ReduceSum.
inline constexpr ir::Cycles kPReluAlphaGradCyclesPerVector = kArithCyclesPerVector + kSelectCyclesPerVector;
// Softmax over an axis (popnn's SOFTMAX_STABLE is popops vertices: a max
// reduction, x - max, EXPONENT, a sum reduction, a reciprocal, a multiply):
// the reductions as the popops reductions above (continuous along a row of
// the axis, strided when each position of the axis holds `inner` values),
// per vector SUBTRACT + EXPONENT + MULTIPLY, one reciprocal (DIVIDE) per
// vector of sums. Its gradient (popnn softmaxInputGradient: y (g - sum(g y))):
// MULTIPLY, a sum reduction, SUBTRACT, MULTIPLY.

// --- Supervisor: the AMP matrix product (MatMulPartial) --------------------
// poplin's ConvPartial1x1Out estimate for float or half activations and
// float or half partials (lib/poplin/PerformanceEstimation.hpp,
// getConvPartial1x1SupervisorInnerLoopCycleEstimateHalfFloat and
// getConvPartial1x1SupervisorOuterLoopCycleEstimateHalfFloat), a matmul
// m x k x n being a 1x1 convolution of m field elements, k input and n
// output channels. Each conv unit takes one group of input channels
// (kAmp*InputChannelsPerGroup: 32 bytes of weights, 8 floats or 16 halves)
// and one field element of one group costs kAmp*CyclesPerElement worker
// cycles ("coreCycles": 8 float, 4 half), so a conv unit does 1 float or 4
// half MACs per cycle and the conv units are ampMacsPerCycle(type) x
// cyclesPerElement / inputChannelsPerGroup: 16 on Mk2 and 8 on Mk1 for both
// types (ampConvUnits). The weights per conv unit are Target values
// (getWeightsPerConvUnit), not in PopLibs' source: estimates that reproduce
// the published 16 float and 64 half MACs per tile per cycle of Mk2.
inline constexpr std::uint64_t kAmpFloatInputChannelsPerGroup = 8;  // float weights per conv unit
inline constexpr ir::Cycles kAmpFloatCyclesPerElement = 8;           // "coreCycles" for float activations
inline constexpr std::uint64_t kAmpHalfInputChannelsPerGroup = 16;  // half weights per conv unit
inline constexpr ir::Cycles kAmpHalfCyclesPerElement = 4;            // "coreCycles" for half activations
// Worker cycles for 0, 1, 2 and >= 3 field elements (the >= 3 case adds
// coreCycles per element beyond 3), and when zeroing the partials
// kAmpZeroingCycles + zeroCyclesPerGroup per element (8 for float
// activations with 16 conv units, 4 for float partials, else 2).
// Float activations:
inline constexpr ir::Cycles kAmpWorkerEmptyCycles = 24;
inline constexpr ir::Cycles kAmpWorkerOneElementCycles = 47;
inline constexpr ir::Cycles kAmpWorkerManyElementsCycles = 46;  // also 2 elements
inline constexpr ir::Cycles kAmpZeroingCycles = 2;
inline constexpr std::uint64_t kAmpWideConvUnits = 16;          // zeroCyclesPerGroup is 8 with 16 conv units,
inline constexpr ir::Cycles kAmpWideZeroCyclesPerElement = 8;   // else 4 (float partials)
inline constexpr ir::Cycles kAmpZeroCyclesPerElement = 4;
inline constexpr ir::Cycles kAmpHalfPartialsZeroCyclesPerElement = 2;
// Half activations with half partials on 8 conv units (the same empty cost
// and zeroing as above):
inline constexpr ir::Cycles kAmpHalfWorkerOneElementCycles = 39;
inline constexpr ir::Cycles kAmpHalfWorkerTwoElementsCycles = 40;
inline constexpr ir::Cycles kAmpHalfWorkerManyElementsCycles = 41;
// Half activations on PopLibs' "common" code path (float partials, or 16
// conv units): the zeroing is folded into the loop, one cycle less than
// not zeroing; 0, 1, 2 elements cost 20, 31, 40 + (zeroing ? 1 : 2), >= 3
// 37 + (zeroing ? 0 : 1). This path retains worker state: each worker run
// saves kAmpRetentionWorkerSavings, and the supervisor pays it back per
// context once plus kAmpRetentionInGroupCycles per further input group
// (conv1x1WorkerRetentionSavings: {7, 3}).
inline constexpr ir::Cycles kAmpCommonPathEmptyCycles = 20 + 1;
inline constexpr ir::Cycles kAmpCommonPathOneElementCycles = 31 + 1;
inline constexpr ir::Cycles kAmpCommonPathTwoElementsCycles = 40 + 1;
inline constexpr ir::Cycles kAmpCommonPathManyElementsCycles = 37;
inline constexpr ir::Cycles kAmpCommonPathNotZeroingCycles = 1;
inline constexpr ir::Cycles kAmpRetentionWorkerSavings = 7;
inline constexpr ir::Cycles kAmpRetentionInGroupCycles = 3;
// The worker with the fewest cycles also carries 14 cycles of tagging.
inline constexpr ir::Cycles kAmpWorkerTagCycles = 14;
// Supervisor: 50 outside the loops; per conv group 12 (+1 on the common
// path); per further input group 15 + 1 (-1 on the common path); per output
// group 19 (-1 on the common path on the first pass) and per pass 6 (7 on
// the first); loading one group's weights into the conv units: conv units x
// 32 bytes / 16 bytes per cycle on Mk2 (ld128), / 8 on Mk1 = 32 cycles on
// both. kAmpCommonPathCycles is that +-1 (float activations always take it).
inline constexpr ir::Cycles kAmpSupervisorOverhead = 50;
inline constexpr ir::Cycles kAmpCommonPathCycles = 1;
inline constexpr ir::Cycles kAmpConvGroupOverhead = 12;
inline constexpr ir::Cycles kAmpFirstPassInGroupOverhead = 10 + 1;
inline constexpr ir::Cycles kAmpInGroupOverhead = 15 + 1;
inline constexpr ir::Cycles kAmpFirstPassOutGroupOverhead = 19 + 7;
inline constexpr ir::Cycles kAmpOutGroupOverhead = 19 + 6;
inline constexpr ir::Cycles kAmpWeightLoadCycles = 32;

// --- The embedding's lookup and update (model/codelets/multi_slice.cpp) ---
// popops' estimators, lib/popops/PerformanceEstimation.cpp:
// getMultiSliceCycleEstimate: 13 cycles of prologue and epilogue; per offset
// in range 19 + 2 per vector of the row (a 4-byte element: dataPathWidth / 32
// per vector; a 2-byte one: 2 per vector, as written there); per offset out
// of range 8.
inline constexpr ir::Cycles kMultiSliceOverhead = 13;
inline constexpr ir::Cycles kMultiSlicePerOffsetInRange = 19;
inline constexpr ir::Cycles kMultiSliceCyclesPerVector = 2;
inline constexpr ir::Cycles kMultiSlicePerOffsetOutOfRange = 8;
// getMultiUpdateOpCycleEstimate (ADD, scaled, as popops' multiUpdateAdd):
// per worker 3 (size load, zero check) + 24 (float) or 25 (half) before the
// outer loop + 2 for the scale; per offset in range 11 (float) or 12 + 1
// (half, scaled), plus 3 per further atom of the row (or 20 per element
// when the row is not whole atoms: sub-word writes); per offset out of
// range 5; the whole is the worker's cycles x the worker contexts + 25 for
// the supervisor.
inline constexpr ir::Cycles kMultiUpdateAddWorkerEntry = 3;
inline constexpr ir::Cycles kMultiUpdateAddFloatSetup = 24;
inline constexpr ir::Cycles kMultiUpdateAddHalfSetup = 25;
inline constexpr ir::Cycles kMultiUpdateAddScaledSetup = 2;
inline constexpr ir::Cycles kMultiUpdateAddFloatPerOffsetInRange = 11;
inline constexpr ir::Cycles kMultiUpdateAddHalfPerOffsetInRange = 12 + 1;
inline constexpr ir::Cycles kMultiUpdateAddCyclesPerAtom = 3;
inline constexpr ir::Cycles kMultiUpdateAddSubWordCyclesPerElement = 20;
inline constexpr ir::Cycles kMultiUpdateAddPerOffsetOutOfRange = 5;
inline constexpr ir::Cycles kMultiUpdateAddSupervisor = 25;
// The tile's atomic store (Poplar's Target::getAtomicStoreGranularity): 4
// bytes, an estimate: poplibs needs sub-word writes for a half row of an odd
// length (so an atom holds 2 halves), and the IPU stores 32 bits at once.
inline constexpr std::uint64_t kAtomicStoreBytes = 4;
// Elements per vector of MultiSlice's copy loop: dataPathWidth / 32 for
// 4-byte elements, 2 for 2-byte ones (popops' table above).
std::uint64_t multiSliceElementsPerVector(const Target& target, ir::DType type);

inline constexpr std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// --- Element types -----------------------------------------------------------
// A vector loop over `type` processes tile.vectorBytes / sizeOf(type) elements
// per 64-bit vector: 2 floats or 4 halves (f32v2 / f16v4 instructions).
// Throws std::invalid_argument if the vector is narrower than one element.
std::uint64_t elementsPerVector(const Target& target, ir::DType type);
// ceil(elements / elementsPerVector(type)).
std::uint64_t vectors(std::uint64_t elements, const Target& target, ir::DType type);
// Floats per datapath vector (elementsPerVector of Float).
std::uint64_t floatsPerVector(const Target& target);
// ceil(elements / floatsPerVector).
std::uint64_t floatVectors(std::uint64_t elements, const Target& target);
// One worker of popops' BroadcastVectorOuterByRow1D over `rows` rows of
// `cols` elements of `type`, `perVector` cycles per vector of a row (the
// broadcast op and its inner-loop overhead): kBroadcastVertexOverhead +
// rows x (kBroadcastRowOverhead + vectors(cols) x perVector). AddBias and
// every per-row or per-column broadcast vertex are costed so.
ir::Cycles broadcastRowsCycles(std::uint64_t rows, std::uint64_t cols, const Target& target, ir::DType type,
                               ir::Cycles perVector = kBroadcastAddCyclesPerVector);
// AMP float MACs per tile per cycle; throws std::invalid_argument if zero.
std::uint64_t ampFloatMacsPerCycle(const Target& target);
// AMP MACs per tile per cycle for operands of `inputType`: Float ->
// tile.ampFloatMacsPerCycle, Half -> tile.ampHalfMacsPerCycle whether the
// partials are half or float. PopLibs takes the rate from the Target
// (poplin getNumConvUnits: fp16InFp32OutConvUnitsPerTile for half inputs with
// float partials, times the conv unit's 4 half input elements per cycle,
// CONV_UNIT_INPUT_LOAD_ELEMS_HALF). The Target value itself is not in
// PopLibs' source; its test tool (single_conv_layer, IPUModel set-up) bounds
// the 16.32 units by min(fp16InFp16Out units, pipeline depth x floats stored
// per cycle), i.e. only the store width of float partials can slow them.
// Full rate (= ampHalfMacsPerCycle) is therefore an assumption (estimate),
// not a published Mk2 figure. Throws std::invalid_argument if the rate is
// zero or the type is not Float or Half.
std::uint64_t ampMacsPerCycle(const Target& target, ir::DType inputType);

// --- Cast float <-> half (popops castWorkerCycles, the aux-pipeline case) ----
// A conversion is a vector op whose width is bounded by the load and store
// bandwidth: opVectorWidth = min(readPorts x loadWidth(from), writePorts x
// storeWidth(to)); each vector costs max(load cycles, store cycles), where
// load cycles = opVectorWidth / min(opVectorWidth, loadWidth(from)) and likewise
// for stores. With 8-byte vectors: float -> half 4 elements per 2 cycles,
// half -> float 2 elements per cycle.
inline constexpr std::uint64_t kCastReadPorts = 2;
inline constexpr std::uint64_t kCastWritePorts = 1;
struct CastVector {
  std::uint64_t elements;  // opVectorWidth
  ir::Cycles cycles;       // per vector
};
CastVector castVector(const Target& target, ir::DType from, ir::DType to);

// popnn NonLinearity2D for one region of n elements of `type`, out of place
// (lib/popnn/popnnCycleEstimators.cpp nonLinearity2DCycleEstimator): opCycles
// per scalar element, vectorCycles per vector (getNonLinearityOpCycles).
ir::Cycles nonLinearity2DCycles(std::uint64_t n, ir::DType type, ir::Cycles opCycles, ir::Cycles vectorCycles,
                                const Target& target);

// Conv units of the AMP for activations of `inputType` (see above):
// ampMacsPerCycle(inputType) x kAmp*CyclesPerElement / kAmp*InputChannelsPerGroup.
// Throws std::invalid_argument if that is zero.
std::uint64_t ampConvUnits(const Target& target, ir::DType inputType);
// Tile cycles of MatMulPartial (m x k) . (k x n) by the poplin estimate
// above for `inputType` activations (a, b) and `partialsType` partials
// (out), each Float or Half; `zeroFirst`: the first input-channel pass
// zeroes the partials (false when accumulating into out); `convGroups`
// such products one after another in one vertex (poplin's numConvGroups:
// the supervisor's conv-group loop, and the retention cost per further
// input group of every conv group).
ir::Cycles ampMatMulCycles(std::uint64_t m, std::uint64_t k, std::uint64_t n, bool zeroFirst,
                           ir::DType inputType, ir::DType partialsType, const Target& target,
                           std::uint64_t convGroups = 1);

}  // namespace ipusim::model::cycles
