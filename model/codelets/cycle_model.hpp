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

// --- Worker vertices ------------------------------------------------------
// Loading the vertex state (pointers, sizes), loop setup and exitz; popops'
// UnaryOp/BinaryOp worker estimators start from a constant of this order (20).
inline constexpr ir::Cycles kWorkerVertexOverhead = 20;
// Outer loop of a 2D vertex, per row: load the row pointer and length, branch
// (popops BinaryOp2D / BroadcastVectorInner2D charge ~10 per sub-vector).
inline constexpr ir::Cycles kRowOverhead = 10;

// Cycles per 64-bit vector (2 floats) of the inner loop, by operation.
// Simple arithmetic issues one f32v2 op per cycle with the load/store bundled
// in a pipelined rpt loop (popops' assembly codelets: ld64 / f32v2add / st64).
inline constexpr ir::Cycles kSimpleOpCyclesPerVector = 1;
// ReluGrad: a compare and a select (f32v2cmpgt, and) per vector.
inline constexpr ir::Cycles kReluGradCyclesPerVector = 2;
// No vector divide: reciprocal then multiply, per float pair (popops
// OpPerformanceInfo INVERSE FLOAT = 6 cycles per loop of 2).
inline constexpr ir::Cycles kDivideCyclesPerVector = 6;
// Transcendental: f32exp is scalar, 6 cycles per loop of 2 floats (popops
// OpPerformanceInfo EXPONENT FLOAT {6, false, 2}).
inline constexpr ir::Cycles kExpCyclesPerVector = 6;
// f32ln, likewise scalar; charged like exp (PopLibs' LOGARITHM FLOAT entry has
// varied between releases; exp's cost is the middle of that range).
inline constexpr ir::Cycles kLogCyclesPerVector = 6;
// Half forms (per vector of 4 halves; popops OpPerformanceInfo, the
// {cycles, vectorised, width} table): EXPONENT HALF {4, false, 4} (two
// f16v2exp), LOGARITHM HALF {4, false, 4} (two f16v2ln), DIVIDE HALF
// {21, false, 4}.
inline constexpr ir::Cycles kExpHalfCyclesPerVector = 4;
inline constexpr ir::Cycles kLogHalfCyclesPerVector = 4;
inline constexpr ir::Cycles kDivideHalfCyclesPerVector = 21;
// int -> float: not on the aux pipeline, one element per 2 cycles (popops
// castWorkerCycles: max(load, store) + 1 with an op vector width of 1).
inline constexpr ir::Cycles kIntToFloatCyclesPerElement = 2;

// Reductions: folding the 2-lane accumulator into one float and storing it
// (f32add of the halves, scale, st32).
inline constexpr ir::Cycles kHorizontalReduceCycles = 3;
// Scalar results per softmax row: one reciprocal of the sum and one log for
// the loss, each a scalar transcendental (half a kExp/kLog vector).
inline constexpr ir::Cycles kScalarReciprocalCycles = kDivideCyclesPerVector / 2;
inline constexpr ir::Cycles kScalarLogCycles = kLogCyclesPerVector / 2;
// Per row of a label-indexed codelet: load the label, bounds check, address.
inline constexpr ir::Cycles kLabelLookupCycles = 4;

// --- Supervisor: the AMP matrix product (MatMulPartial) --------------------
// Follows poplin's ConvPartial1x1Out supervisor estimate
// (getConvPartial1x1SupervisorOuterLoopCycleEstimate: 6 + 16 per conv group
// + 8 per output group ...): a fixed supervisor cost, a cost per output row
// (reloading the AMP weights / pointers), and the MACs at the AMP rate.
inline constexpr ir::Cycles kAmpSupervisorOverhead = 6 + 16;
inline constexpr ir::Cycles kAmpRowOverhead = 8;
// Zeroing the partials when not accumulating: one st64 per 2 floats.
inline constexpr ir::Cycles kZeroCyclesPerVector = 1;

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

}  // namespace ipusim::model::cycles
