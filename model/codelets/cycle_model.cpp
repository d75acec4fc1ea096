#include "model/codelets/cycle_model.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace ipusim::model::cycles {

std::uint64_t floatsPerVector(const Target& target) {
  const std::uint64_t floats = target.tile.vectorBytes / sizeof(float);
  if (floats == 0)
    throw std::invalid_argument("tile.vectorBytes = " + std::to_string(target.tile.vectorBytes) +
                                ": a codelet's vector must hold at least one float (>= 4 bytes)");
  return floats;
}

std::uint64_t floatVectors(std::uint64_t elements, const Target& target) {
  return ceilDiv(elements, floatsPerVector(target));
}

std::uint64_t ampFloatMacsPerCycle(const Target& target) {
  if (target.tile.ampFloatMacsPerCycle == 0)
    throw std::invalid_argument("tile.ampFloatMacsPerCycle = 0: MatMulPartial needs an AMP rate >= 1");
  return target.tile.ampFloatMacsPerCycle;
}

namespace {

// One worker's cycles for `elements` field elements of one group.
ir::Cycles ampWorkerCycles(std::uint64_t elements, bool zeroing, std::uint64_t convUnits) {
  const ir::Cycles zeroPerGroup =
      convUnits == kAmpWideConvUnits ? kAmpWideZeroCyclesPerElement : kAmpZeroCyclesPerElement;
  const ir::Cycles zeroing1 = zeroing ? kAmpZeroingCycles + zeroPerGroup * std::max<std::uint64_t>(elements, 1) : 0;
  switch (elements) {
    case 0: return kAmpWorkerEmptyCycles;
    case 1: return kAmpWorkerOneElementCycles + zeroing1;
    case 2: return kAmpWorkerManyElementsCycles + zeroing1;
    default: return kAmpWorkerManyElementsCycles + zeroing1 + (elements - 3) * kAmpFloatCyclesPerElement;
  }
}

// The inner loop: m field elements split evenly over the worker contexts;
// the tile waits for the slowest (each worker issues every `contexts` cycles).
ir::Cycles ampInnerLoopCycles(std::uint64_t m, bool zeroing, std::uint64_t convUnits, std::uint64_t contexts) {
  const std::uint64_t used = std::min<std::uint64_t>(m, contexts);
  ir::Cycles slowest = 0;
  ir::Cycles fastest = used < contexts ? 0 : std::numeric_limits<ir::Cycles>::max();
  for (std::uint64_t w = 0; w < used; ++w) {
    const std::uint64_t elements = m / contexts + (w < m % contexts ? 1 : 0);
    const ir::Cycles c = contexts * ampWorkerCycles(elements, zeroing, convUnits);
    slowest = std::max(slowest, c);
    fastest = std::min(fastest, c);
  }
  return std::max(slowest, fastest + kAmpWorkerTagCycles);
}

}  // namespace

ir::Cycles ampMatMulCycles(std::uint64_t m, std::uint64_t k, std::uint64_t n, bool zeroFirst, const Target& target) {
  const std::uint64_t convUnits = ampFloatMacsPerCycle(target);
  const std::uint64_t contexts = target.tile.workerContexts;
  const std::uint64_t inGroups = ceilDiv(k, kAmpFloatInputChannelsPerGroup);
  const std::uint64_t outGroups = ceilDiv(n, convUnits);
  const ir::Cycles first = ampInnerLoopCycles(m, zeroFirst, convUnits, contexts);
  const ir::Cycles later = ampInnerLoopCycles(m, false, convUnits, contexts);
  return kAmpSupervisorOverhead + kAmpConvGroupOverhead +
         (inGroups - 1) * (kAmpInGroupOverhead + outGroups * (kAmpOutGroupOverhead + kAmpWeightLoadCycles + later)) +
         kAmpFirstPassInGroupOverhead +
         outGroups * (kAmpFirstPassOutGroupOverhead + kAmpWeightLoadCycles + first);
}

}  // namespace ipusim::model::cycles
