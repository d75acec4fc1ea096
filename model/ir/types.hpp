#pragma once
// Basic vocabulary of the executable IR: element types, tensor references and
// the debug origin every program step carries.
#include <cstdint>
#include <string>

namespace ipusim::ir {

using Cycles = std::uint64_t;  // the one timebase: device clock cycles
using Id = std::uint32_t;      // index into the executable's tables
inline constexpr Id kNoId = 0xffffffffu;

// Half is IEEE binary16 (Poplar's HALF), stored as its 16-bit pattern
// (model/numeric/half.hpp converts it).
enum class DType : std::uint8_t { Float, Int, UInt, Bool, Half };

// Bytes per element in tile memory (Bool is stored as one byte, Half as two).
std::size_t sizeOf(DType type);
const char* toString(DType type);
DType dtypeFromString(const std::string& name);  // throws std::invalid_argument

// A contiguous range of a tensor's elements, [begin, end), in row-major order.
struct TensorRef {
  Id tensor = kNoId;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t size() const { return end - begin; }
  bool operator==(const TensorRef& o) const {
    return tensor == o.tensor && begin == o.begin && end == o.end;
  }
};

// Where a program step, compute set or tensor came from in the workload:
// the layer ("dense_1") and the op ("matmul", "relu_grad", ...).
struct DebugInfo {
  std::string layer;
  std::string op;
};

}  // namespace ipusim::ir
