#pragma once
// Shared by the libFuzzer targets: every input must end in a result or in
// one of the documented error types; anything else (a crash, a sanitizer
// report, another exception type escaping) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

namespace ipusim::fuzz {

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace ipusim::fuzz
