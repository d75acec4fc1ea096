#include "model/codelets/cycle_model.hpp"

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

}  // namespace ipusim::model::cycles
