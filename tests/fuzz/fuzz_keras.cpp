// Fuzzes the Keras importer: a model.to_json() text -> parseKerasModel
// (both formats, layer configs, shapes that must chain, compile_config); an
// input that starts as a zip is read as a .keras archive first (libzip, the
// config.json entry bounded to the importer's 16 MiB), one that starts as
// HDF5 as a legacy .h5 model (libhdf5, its model_config attribute).
#include "fuzz_common.hpp"
#include "scheduler/models/keras_archive.hpp"
#include "scheduler/models/keras_h5_model.hpp"
#include "scheduler/models/keras_model.hpp"

#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = ipusim::fuzz::text(data, size);
  try {
    if (ipusim::scheduler::looksLikeZip(text)) text = ipusim::scheduler::kerasArchiveConfig(text, "fuzz.keras", 16ull << 20);
    else if (ipusim::scheduler::looksLikeHdf5(text)) text = ipusim::scheduler::kerasH5ModelText(text, "fuzz.h5", 16ull << 20);
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) return 0;
    ipusim::scheduler::parseKerasModel(j, "fuzz.json");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
