// Fuzzes the serialized-graph reader: JSON text -> ir::fromJson (schema and
// validation: ids, regions, tiles, cycles, nesting depth).
#include "fuzz_common.hpp"
#include "model/ir/executable.hpp"

#include <stdexcept>


extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json j = nlohmann::json::parse(ipusim::fuzz::text(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    ipusim::ir::fromJson(j);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
