#include "model/codelets/cycle_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ipusim::model::cycles {

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

}  // namespace ipusim::model::cycles
