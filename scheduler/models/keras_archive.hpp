#pragma once
// Reading a Keras model file's JSON, whatever holds it: a model.to_json()
// text, or a Keras 3 `.keras` archive (model.save("m.keras")): a zip of
// config.json (the model object, as to_json() writes it, with its
// compile_config), metadata.json and model.weights.h5. The archive is told by
// its content (the zip signature), not its name; only config.json is read
// (through libzip) for the model; the weights (model.weights.h5) only when a
// workload asks for them (keras_weights.hpp); the metadata never. A legacy
// HDF5 file (Keras 2's model.save("m.h5")) is read by keras_h5_model.hpp.
// Errors are std::invalid_argument naming the file. Internal to scheduler/.
#include <cstdint>
#include <string>

namespace ipusim::scheduler {

// The JSON text of the Keras model file at `path` (at most `maxJsonBytes`,
// whether the file itself or the archive's config.json; a regular file).
std::string readKerasModelText(const std::string& path, std::uint64_t maxJsonBytes);

// The model.weights.h5 entry of the .keras archive at `path` (a regular
// file), at most `maxBytes` whatever its header claims.
std::string kerasArchiveWeights(const std::string& path, std::uint64_t maxBytes);

// Whether `bytes` begin as a zip archive does ("PK\3\4", or "PK\5\6" when empty).
bool looksLikeZip(const std::string& bytes);
// Whether `bytes` begin with HDF5's signature ("\x89HDF\r\n\x1a\n").
bool looksLikeHdf5(const std::string& bytes);

// config.json of a .keras archive held in memory (the fuzzer reads archives
// so); `path` names it in errors. Reads at most `maxJsonBytes` + 1 bytes of
// it whatever its header claims (a zip bomb stops there).
std::string kerasArchiveConfig(const std::string& bytes, const std::string& path, std::uint64_t maxJsonBytes);

}  // namespace ipusim::scheduler
