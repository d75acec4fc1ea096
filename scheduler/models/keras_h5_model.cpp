#include "scheduler/models/keras_h5_model.hpp"

#include "model/util/json_nesting.hpp"
#include "model/util/json_unique_keys.hpp"
#include "scheduler/models/hdf5_image.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace ipusim::scheduler {
namespace {

using json = nlohmann::json;

// An attribute's JSON text, parsed (its nesting bounded first).
json jsonAttribute(const Hdf5Image& file, const std::string& name, const std::string& text, std::uint64_t maxJsonBytes) {
  if (text.size() > maxJsonBytes)
    file.fail("its attribute '" + name + "' is " + std::to_string(text.size()) + " bytes (at most " +
              std::to_string(maxJsonBytes) + " are read)");
  util::checkJsonNesting(text, file.path() + " (attribute '" + name + "')");
  json j = util::parseJsonWithUniqueKeys(text, file.path() + " (attribute '" + name + "')", false);
  if (j.is_discarded() || !j.is_object())
    file.fail("its attribute '" + name + "' is not a JSON object (expected the model's JSON, as Keras writes it)");
  return j;
}

// training_config -> the compile_config Keras 3's to_json() writes.
json compileConfigOf(json training) {
  json compile = json::object();
  for (auto& [key, value] : training.items()) {
    if (key == "sample_weight_mode" && value.is_null()) continue;  // Keras 2's default: nothing to model
    if (key != "optimizer_config") {
      compile[key] = value;
      continue;
    }
    json optimizer = value;
    if (optimizer.is_object() && optimizer.contains("class_name") && optimizer.at("class_name").is_string()) {
      std::string cls = optimizer.at("class_name").get<std::string>();
      // TF 2.11-2.15 registered its optimizers as "Custom>Adam".
      if (cls.rfind("Custom>", 0) == 0) optimizer["class_name"] = cls.substr(7);
    }
    // TF 1.x and Keras 2.0-2.2 named the learning rate "lr".
    if (optimizer.is_object() && optimizer.contains("config") && optimizer.at("config").is_object()) {
      json& config = optimizer.at("config");
      if (config.contains("lr") && !config.contains("learning_rate")) {
        config["learning_rate"] = config.at("lr");
        config.erase("lr");
      }
    }
    compile["optimizer"] = optimizer;
  }
  return compile;
}

}  // namespace

std::string kerasH5ModelText(std::string bytes, const std::string& path, std::uint64_t maxJsonBytes) {
  const Hdf5Image file(std::move(bytes), path);
  const auto config = file.stringAttribute("", "model_config");
  if (!config)
    file.fail("an HDF5 file without a model_config attribute: a weights file (model.save_weights) holds no model; "
              "give the model (its to_json() text, a .keras archive or a whole-model .h5) and these weights as model.weights");
  json model = jsonAttribute(file, "model_config", *config, maxJsonBytes);
  if (const auto version = file.stringAttribute("", "keras_version")) model["keras_version"] = *version;
  if (const auto training = file.stringAttribute("", "training_config"))
    model["compile_config"] = compileConfigOf(jsonAttribute(file, "training_config", *training, maxJsonBytes));
  return model.dump();
}

}  // namespace ipusim::scheduler
