#pragma once
// A Keras model saved as a legacy HDF5 file (Keras 2's and tf.keras's
// model.save("m.h5"), Keras 3's legacy_h5_format): its `model_config`
// attribute is the model's JSON as to_json() writes it, `keras_version`
// names the writer, and `training_config` the compile arguments (loss,
// metrics, optimizer_config), read here as the compile_config Keras 3's
// to_json() would hold (optimizer_config as optimizer; TF 1.x's "lr" as
// learning_rate; TF 2.11+'s "Custom>Adam" as Adam). The weights
// (model_weights) are read by keras_weights.hpp. Errors are
// std::invalid_argument naming the file and the attribute. Internal to scheduler/.
#include <cstdint>
#include <string>

namespace ipusim::scheduler {

// The model's JSON (at most `maxJsonBytes`) of the HDF5 file whose bytes are `bytes`.
std::string kerasH5ModelText(std::string bytes, const std::string& path, std::uint64_t maxJsonBytes);

}  // namespace ipusim::scheduler
