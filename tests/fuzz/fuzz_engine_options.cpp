// Fuzzes the engine options: any text as --engine-options (JSON object of
// Poplar-style strings, booleans, numbers).
#include "fuzz_common.hpp"
#include "sim/options/engine_options.hpp"

#include <stdexcept>


extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ipusim::sim::EngineOptions options;
  try {
    options.applyText(ipusim::fuzz::text(data, size), "fuzz");
    options.toJson();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
