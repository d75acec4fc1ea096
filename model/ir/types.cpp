#include "model/ir/types.hpp"

#include <stdexcept>

namespace ipusim::ir {

std::size_t sizeOf(DType type) {
  switch (type) {
    case DType::Float: return 4;
    case DType::Int: return 4;
    case DType::UInt: return 4;
    case DType::Bool: return 1;
    case DType::Half: return 2;
  }
  throw std::invalid_argument("sizeOf: invalid DType value " + std::to_string(int(type)));
}

const char* toString(DType type) {
  switch (type) {
    case DType::Float: return "float";
    case DType::Int: return "int";
    case DType::UInt: return "uint";
    case DType::Bool: return "bool";
    case DType::Half: return "half";
  }
  return "invalid";
}

DType dtypeFromString(const std::string& name) {
  for (DType t : {DType::Float, DType::Int, DType::UInt, DType::Bool, DType::Half})
    if (name == toString(t)) return t;
  throw std::invalid_argument("unknown dtype '" + name + "' (expected float, half, int, uint or bool)");
}

}  // namespace ipusim::ir
