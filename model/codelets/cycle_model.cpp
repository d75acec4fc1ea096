#include "model/codelets/cycle_model.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace ipusim::model::cycles {

std::uint64_t multiSliceElementsPerVector(const Target& target, ir::DType type) {
  if (type == ir::DType::Half) return 2;
  return std::max<std::uint64_t>(1, target.tile.vectorBytes / 4);
}

std::uint64_t elementsPerVector(const Target& target, ir::DType type) {
  const std::uint64_t elements = target.tile.vectorBytes / ir::sizeOf(type);
  if (elements == 0)
    throw std::invalid_argument("tile.vectorBytes = " + std::to_string(target.tile.vectorBytes) +
                                ": a codelet's vector must hold at least one " + ir::toString(type) + " (>= " +
                                std::to_string(ir::sizeOf(type)) + " bytes)");
  return elements;
}

std::uint64_t vectors(std::uint64_t elements, const Target& target, ir::DType type) {
  return ceilDiv(elements, elementsPerVector(target, type));
}

std::uint64_t floatsPerVector(const Target& target) { return elementsPerVector(target, ir::DType::Float); }

std::uint64_t floatVectors(std::uint64_t elements, const Target& target) {
  return ceilDiv(elements, floatsPerVector(target));
}

ir::Cycles broadcastRowsCycles(std::uint64_t rows, std::uint64_t cols, const Target& target, ir::DType type,
                               ir::Cycles perVector) {
  return kBroadcastVertexOverhead + rows * (kBroadcastRowOverhead + vectors(cols, target, type) * perVector);
}

std::uint64_t ampFloatMacsPerCycle(const Target& target) {
  if (target.tile.ampFloatMacsPerCycle == 0)
    throw std::invalid_argument("tile.ampFloatMacsPerCycle = 0: MatMulPartial needs an AMP rate >= 1");
  return target.tile.ampFloatMacsPerCycle;
}

std::uint64_t ampMacsPerCycle(const Target& target, ir::DType inputType) {
  if (inputType == ir::DType::Float) return ampFloatMacsPerCycle(target);
  if (inputType != ir::DType::Half)
    throw std::invalid_argument(std::string("the AMP multiplies float or half operands, not ") +
                                ir::toString(inputType));
  if (target.tile.ampHalfMacsPerCycle == 0)
    throw std::invalid_argument("tile.ampHalfMacsPerCycle = 0: a half MatMulPartial needs an AMP rate >= 1");
  return target.tile.ampHalfMacsPerCycle;
}

CastVector castVector(const Target& target, ir::DType from, ir::DType to) {
  const std::uint64_t loadWidth = elementsPerVector(target, from);
  const std::uint64_t storeWidth = elementsPerVector(target, to);
  const std::uint64_t width = std::min(loadWidth * kCastReadPorts, storeWidth * kCastWritePorts);
  const ir::Cycles load = width / std::min(width, loadWidth);
  const ir::Cycles store = width / std::min(width, storeWidth);
  return {width, std::max(load, store)};
}

std::uint64_t ampConvUnits(const Target& target, ir::DType inputType) {
  const bool floatActs = inputType == ir::DType::Float;
  const std::uint64_t units = ampMacsPerCycle(target, inputType) *
                              (floatActs ? kAmpFloatCyclesPerElement : kAmpHalfCyclesPerElement) /
                              (floatActs ? kAmpFloatInputChannelsPerGroup : kAmpHalfInputChannelsPerGroup);
  if (units == 0)
    throw std::invalid_argument("tile.ampHalfMacsPerCycle = " + std::to_string(target.tile.ampHalfMacsPerCycle) +
                                ": a half MatMulPartial needs at least one conv unit (>= " +
                                std::to_string(kAmpHalfInputChannelsPerGroup / kAmpHalfCyclesPerElement) +
                                " half MACs per cycle)");
  return units;
}

namespace {

// Which branch of poplin's estimate applies.
struct AmpPath {
  bool floatActivations;
  bool common;  // PopLibs' commonHalfAndFloatPartialsCodePath
  std::uint64_t convUnits;
  ir::Cycles coreCycles;
  ir::Cycles zeroPerElement;
  ir::Cycles retentionSavings;  // per worker run (conv1x1WorkerRetentionSavings.first)
};

AmpPath ampPath(ir::DType inputType, ir::DType partialsType, const Target& target) {
  if (partialsType != ir::DType::Float && partialsType != ir::DType::Half)
    throw std::invalid_argument(std::string("MatMulPartial's partials are float or half, not ") +
                                ir::toString(partialsType));
  AmpPath p{};
  p.floatActivations = inputType == ir::DType::Float;
  const bool floatPartials = p.floatActivations || partialsType == ir::DType::Float;
  p.convUnits = ampConvUnits(target, inputType);
  p.common = (!p.floatActivations && p.convUnits == kAmpWideConvUnits) || floatPartials;
  p.coreCycles = p.floatActivations ? kAmpFloatCyclesPerElement : kAmpHalfCyclesPerElement;
  p.zeroPerElement = p.floatActivations && p.convUnits == kAmpWideConvUnits ? kAmpWideZeroCyclesPerElement
                     : floatPartials                                        ? kAmpZeroCyclesPerElement
                                                                            : kAmpHalfPartialsZeroCyclesPerElement;
  p.retentionSavings = !p.floatActivations && p.common ? kAmpRetentionWorkerSavings : 0;
  return p;
}

// One worker's cycles for `elements` field elements of one group.
ir::Cycles ampWorkerCycles(std::uint64_t elements, bool zeroing, const AmpPath& p) {
  if (!p.floatActivations && p.common) {
    const ir::Cycles notZeroing = zeroing ? 0 : kAmpCommonPathNotZeroingCycles;
    ir::Cycles c = 0;
    switch (elements) {
      case 0: c = kAmpCommonPathEmptyCycles + notZeroing; break;
      case 1: c = kAmpCommonPathOneElementCycles + notZeroing; break;
      case 2: c = kAmpCommonPathTwoElementsCycles + notZeroing; break;
      default: c = kAmpCommonPathManyElementsCycles + notZeroing + (elements - 3) * p.coreCycles;
    }
    return c - p.retentionSavings;
  }
  const ir::Cycles zeroingCycles =
      zeroing ? kAmpZeroingCycles + p.zeroPerElement * std::max<std::uint64_t>(elements, 1) : 0;
  const ir::Cycles one = p.floatActivations ? kAmpWorkerOneElementCycles : kAmpHalfWorkerOneElementCycles;
  const ir::Cycles two = p.floatActivations ? kAmpWorkerManyElementsCycles : kAmpHalfWorkerTwoElementsCycles;
  const ir::Cycles many = p.floatActivations ? kAmpWorkerManyElementsCycles : kAmpHalfWorkerManyElementsCycles;
  switch (elements) {
    case 0: return kAmpWorkerEmptyCycles;
    case 1: return one + zeroingCycles;
    case 2: return two + zeroingCycles;
    default: return many + zeroingCycles + (elements - 3) * p.coreCycles;
  }
}

// The inner loop: m field elements split evenly over the worker contexts;
// the tile waits for the slowest (each worker issues every `contexts` cycles).
ir::Cycles ampInnerLoopCycles(std::uint64_t m, bool zeroing, const AmpPath& p, std::uint64_t contexts) {
  const std::uint64_t used = std::min<std::uint64_t>(m, contexts);
  ir::Cycles slowest = 0;
  ir::Cycles fastest = used < contexts ? 0 : std::numeric_limits<ir::Cycles>::max();
  for (std::uint64_t w = 0; w < used; ++w) {
    const std::uint64_t elements = m / contexts + (w < m % contexts ? 1 : 0);
    const ir::Cycles c = contexts * ampWorkerCycles(elements, zeroing, p);
    slowest = std::max(slowest, c);
    fastest = std::min(fastest, c);
  }
  return std::max(slowest, fastest + kAmpWorkerTagCycles);
}

}  // namespace

ir::Cycles ampMatMulCycles(std::uint64_t m, std::uint64_t k, std::uint64_t n, bool zeroFirst, ir::DType inputType,
                           ir::DType partialsType, const Target& target, std::uint64_t convGroups) {
  const AmpPath p = ampPath(inputType, partialsType, target);
  const std::uint64_t contexts = target.tile.workerContexts;
  const std::uint64_t inGroups =
      ceilDiv(k, p.floatActivations ? kAmpFloatInputChannelsPerGroup : kAmpHalfInputChannelsPerGroup);
  const std::uint64_t outGroups = ceilDiv(n, p.convUnits);
  const ir::Cycles common = p.common ? kAmpCommonPathCycles : 0;
  const ir::Cycles retention =
      p.retentionSavings == 0
          ? 0
          : contexts * (p.retentionSavings + kAmpRetentionInGroupCycles * (inGroups * convGroups - 1));
  const ir::Cycles first = ampInnerLoopCycles(m, zeroFirst, p, contexts);
  const ir::Cycles later = ampInnerLoopCycles(m, false, p, contexts);
  return kAmpSupervisorOverhead + retention +
         convGroups * (kAmpConvGroupOverhead + common +
                       (inGroups - 1) * (kAmpInGroupOverhead - common +
                                         outGroups * (kAmpOutGroupOverhead + kAmpWeightLoadCycles + later)) +
                       kAmpFirstPassInGroupOverhead +
                       outGroups * (kAmpFirstPassOutGroupOverhead - common + kAmpWeightLoadCycles + first));
}

ir::Cycles nonLinearity2DCycles(std::uint64_t n, ir::DType type, ir::Cycles opCycles, ir::Cycles vectorCycles,
                                const Target& target) {
  const bool isFloat = type == ir::DType::Float;
  const std::uint64_t width = elementsPerVector(target, type);
  const std::uint64_t numVectors = n / width, remainder = n % width;
  ir::Cycles cycles = 5 + 2 + 5 + 2;  // vertex overhead; out pointer, base and DeltaN pointers, unpack, mask
  cycles += 4 + 1 + (isFloat ? 0 : 2) + (isFloat ? 2 : 3) + 2;  // the region: pointers, alignment tests, vector count
  if (numVectors) cycles += 2 + opCycles + (numVectors - 1) * vectorCycles + 1 + opCycles;  // the pipelined loop
  if (isFloat) {
    cycles += 2 + (remainder ? 2 + opCycles : 0);
  } else {
    cycles += 2 + ((remainder & 2) ? 2 + opCycles : 0) + 2 + ((remainder & 1) ? 3 + opCycles : 0);
  }
  return cycles + 1;  // brnzdec
}

}  // namespace ipusim::model::cycles
