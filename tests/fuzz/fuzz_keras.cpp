// Fuzzes the Keras importer: a model.to_json() text -> parseKerasModel
// (both formats, layer configs, shapes that must chain, compile_config).
#include "fuzz_common.hpp"
#include "scheduler/models/keras_model.hpp"

#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json j = nlohmann::json::parse(ipusim::fuzz::text(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    ipusim::scheduler::parseKerasModel(j, "fuzz.json");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
