#pragma once
// "[begin,end)": how error messages of the IR name a range of elements.
#include <cstdint>
#include <string>

namespace ipusim::ir {

inline std::string rangeText(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + "," + std::to_string(end) + ")";
}

}  // namespace ipusim::ir
