// Fuzzes the workload reader: JSON text -> parseWorkload (keys, types, limits).
#include "fuzz_common.hpp"
#include "scheduler/models/workload.hpp"

#include <stdexcept>


extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json j = nlohmann::json::parse(ipusim::fuzz::text(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    ipusim::scheduler::parseWorkload(j, "fuzz.json");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
