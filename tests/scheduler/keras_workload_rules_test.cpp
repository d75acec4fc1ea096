// One set of rules: every value the workload format refuses is refused from
// a Keras file too, for the same reason in the same words; only where the
// message says it is differs (the workload's key path, the Keras layer and
// key). And checks made after the import (sizes over their limits) name the
// Keras layer and key, not ipusim's model.layers[i].
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

namespace ipusim::scheduler::keras_workload_rules_test {
namespace {

using nlohmann::json;

template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

// What follows "<marker>" in `message` (the reason after the key), or the whole message.
std::string reasonAfter(const std::string& message, const std::string& marker) {
  const std::size_t at = message.find(marker);
  return at == std::string::npos ? "(no '" + marker + "' in) " + message : message.substr(at + marker.size());
}

struct LayerCase {
  std::string type, cls;  // the workload's layer type and the Keras class
  json config;            // the keys both share
  std::string key;
  json value;
};

json workloadWith(const json& layer) {
  return {{"dataset", {{"format", "synthetic"}, {"input_shape", {8, 8, 2}}}},
          {"model", {{"layers", {layer, {{"type", "flatten"}}, {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}}}}}};
}

json kerasWith(const std::string& cls, json config) {
  config["name"] = "x";
  config["batch_input_shape"] = {nullptr, 8, 8, 2};
  return {{"class_name", "Sequential"}, {"keras_version", "2.4.0"},
          {"config", {{"name", "m"}, {"layers", {{{"class_name", cls}, {"config", config}},
                                                {{"class_name", "Flatten"}, {"config", {{"name", "f"}}}},
                                                {{"class_name", "Dense"}, {"config", {{"name", "d"}, {"units", 10}, {"activation", "softmax"}}}}}}}}};
}

TEST(OneSetOfRules, LayerValuesAreRefusedForTheSameReason) {
  const std::vector<LayerCase> cases{
      {"dropout", "Dropout", {{"rate", 0.5}}, "rate", 1},
      {"dropout", "Dropout", {{"rate", 0.5}}, "rate", -0.5},
      {"batch_normalization", "BatchNormalization", json::object(), "momentum", 1.5},
      {"batch_normalization", "BatchNormalization", json::object(), "epsilon", 0},
      {"dense", "Dense", {{"units", 4}}, "units", 0},
      {"conv2d", "Conv2D", {{"filters", 4}, {"kernel_size", 3}}, "filters", 0},
      {"conv2d", "Conv2D", {{"filters", 4}, {"kernel_size", 3}}, "kernel_size", 0},
      {"conv2d", "Conv2D", {{"filters", 4}, {"kernel_size", 3}}, "strides", json::array({1, 0})},
      {"conv2d", "Conv2D", {{"filters", 4}, {"kernel_size", 3}}, "padding", "full"},
      {"conv2d", "Conv2D", {{"filters", 4}, {"kernel_size", 3}}, "groups", 0},
      {"elu", "ELU", json::object(), "alpha", -1},
      {"leaky_relu", "LeakyReLU", json::object(), "negative_slope", -1},
      {"max_pooling2d", "MaxPooling2D", {{"pool_size", 2}}, "pool_size", 0},
      {"max_pooling2d", "MaxPooling2D", {{"pool_size", 2}}, "padding", "full"},
  };
  for (const LayerCase& c : cases) {
    json layer = c.config;
    layer["type"] = c.type;
    layer[c.key] = c.value;
    const std::string w = errorOf([&] { parseWorkload(workloadWith(layer), "w.json"); });
    json config = c.config;
    config[c.key] = c.value;
    const std::string k = errorOf([&] { parseKerasModel(kerasWith(c.cls, config), "m.json"); });
    EXPECT_EQ(reasonAfter(w, "w.json: model.layers[0]." + c.key + ": "), reasonAfter(k, "m.json: layer 'x' (" + c.cls + "): " + c.key + ": "))
        << c.type << "." << c.key << " = " << c.value.dump() << "\n  workload: " << w << "\n  keras:    " << k;
  }
}

struct OptimizerCase {
  std::string type, cls, key;
  json value;
};

TEST(OneSetOfRules, OptimizerValuesAreRefusedForTheSameReason) {
  const std::vector<OptimizerCase> cases{
      {"rmsprop", "RMSprop", "rho", 1},          {"rmsprop", "RMSprop", "epsilon", 0},
      {"rmsprop", "RMSprop", "momentum", 1.5},   {"adam", "Adam", "beta_1", 1},
      {"adam", "Adam", "beta_1", -0.1},          {"adam", "Adam", "beta_2", 1},
      {"adam", "Adam", "epsilon", 0},            {"adamax", "Adamax", "beta_1", 1},
      {"nadam", "Nadam", "beta_2", 1.5},         {"sgd", "SGD", "momentum", 1.5},
      {"sgd", "SGD", "learning_rate", 0},        {"adagrad", "Adagrad", "initial_accumulator_value", -1},
      {"adamw", "AdamW", "weight_decay", -0.1},  {"sgd", "SGD", "clipnorm", -1},
  };
  const json model = json::parse(std::ifstream(std::string(IPUSIM_SOURCE_DIR) + "/tests/data/keras/optimizers_keras3.json"));
  for (const OptimizerCase& c : cases) {
    const json workload = {{"dataset", {{"format", "synthetic"}}},
                           {"model", {{"layers", {{{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}}}}},
                           {"optimizer", {{"type", c.type}, {c.key, c.value}}}};
    const std::string w = errorOf([&] { parseWorkload(workload, "w.json"); });
    json keras = model;
    keras["compile_config"]["optimizer"] = {{"module", "keras.optimizers"}, {"class_name", c.cls},
                                            {"config", {{c.key, c.value}}}, {"registered_name", nullptr}};
    const std::string k = errorOf([&] { parseKerasModel(keras, "m.json"); });
    EXPECT_EQ(reasonAfter(w, "w.json: optimizer." + c.key + ": "),
              reasonAfter(k, "m.json: compile_config.optimizer (" + c.cls + "): " + c.key + ": "))
        << c.cls << "." << c.key << " = " << c.value.dump() << "\n  workload: " << w << "\n  keras:    " << k;
  }
}

TEST(OneSetOfRules, StepsPerExecutionAndDtypePolicies) {
  const json model = json::parse(std::ifstream(std::string(IPUSIM_SOURCE_DIR) + "/tests/data/keras/optimizers_keras3.json"));
  const json layers = {{{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}};
  {
    const json workload = {{"dataset", {{"format", "synthetic"}}}, {"model", {{"layers", layers}}},
                           {"training", {{"steps_per_execution", 0}}}};
    json keras = model;
    keras["compile_config"]["steps_per_execution"] = 0;
    const std::string w = errorOf([&] { parseWorkload(workload, "w.json"); });
    const std::string k = errorOf([&] { parseKerasModel(keras, "m.json"); });
    EXPECT_EQ(reasonAfter(w, "w.json: training.steps_per_execution: "), reasonAfter(k, "m.json: compile_config: steps_per_execution: "))
        << w << "\n" << k;
  }
  for (const char* policy : {"bfloat16", "mixed_bfloat16", "float64", "int32"}) {
    const json workload = {{"dataset", {{"format", "synthetic"}}}, {"model", {{"layers", layers}, {"dtype", policy}}}};
    json keras = model;
    keras["config"]["layers"][1]["config"]["dtype"]["config"]["name"] = policy;
    const std::string w = errorOf([&] { parseWorkload(workload, "w.json"); });
    const std::string k = errorOf([&] { parseKerasModel(keras, "m.json"); });
    const std::string reason = reasonAfter(w, "w.json: model.dtype: ");
    EXPECT_EQ(reason, reasonAfter(k, "(Dense): dtype: ")) << w << "\n" << k;
    EXPECT_EQ(reason.rfind("'" + std::string(policy) + "' is not modelled (float32 | float16 | mixed_float16)", 0), 0u) << reason;
  }
  const std::string bf16 = errorOf([&] {
    parseWorkload({{"dataset", {{"format", "synthetic"}}}, {"model", {{"layers", layers}, {"dtype", "bfloat16"}}}}, "w.json");
  });
  EXPECT_EQ(bf16, "w.json: model.dtype: 'bfloat16' is not modelled (float32 | float16 | mixed_float16): bfloat16 is not an "
                  "arithmetic type of the IPU (its hardware computes in 32-bit float and 16-bit IEEE half; "
                  "mixed_float16 is the IPU's mixed precision)");
  const std::string f64 = errorOf([&] {
    parseWorkload({{"dataset", {{"format", "synthetic"}}}, {"model", {{"layers", layers}, {"dtype", "float64"}}}}, "w.json");
  });
  EXPECT_EQ(f64, "w.json: model.dtype: 'float64' is not modelled (float32 | float16 | mixed_float16): the IPU has no "
                 "64-bit floating-point arithmetic (its hardware computes in 32-bit float and 16-bit half)");
}

// A size over its limit found after the import names the Keras layer and key.
TEST(OneSetOfRules, LimitsAfterTheImportNameTheKerasLayer) {
  // 3 x 3 x 2 x 20,000,000 float kernel elements: 1.44 GB, over the 1 GiB of one tensor.
  json keras = kerasWith("Conv2D", {{"filters", 20000000}, {"kernel_size", 3}});
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ipusim_limits_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << keras.dump();
  const std::string e = errorOf([&] {
    parseWorkload({{"dataset", {{"format", "synthetic"}}}, {"model", {{"keras", path}}}}, "w.json");
  });
  std::filesystem::remove(path);
  EXPECT_EQ(e, path + ": layer 'x' (Conv2D): filters: needs 1440000000 bytes of float kernel; the limit for one tensor "
                      "is 1073741824 bytes");
  EXPECT_EQ(e.find("model.layers"), std::string::npos) << e;
}

// A Keras input left unknown must come from the dataset: the message says so in those words.
TEST(OneSetOfRules, UnknownInputSizeNamesDatasetInputShape) {
  json keras = kerasWith("Conv2D", {{"filters", 4}, {"kernel_size", 3}});
  keras["config"]["layers"][0]["config"]["batch_input_shape"] = {nullptr, nullptr, nullptr, 2};
  keras["config"]["layers"][1] = {{"class_name", "GlobalAveragePooling2D"}, {"config", {{"name", "g"}}}};
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ipusim_unknown_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << keras.dump();
  const std::string e = errorOf([&] {
    parseWorkload({{"dataset", {{"format", "synthetic"}}}, {"model", {{"keras", path}}}}, "w.json");
  });
  std::filesystem::remove(path);
  EXPECT_EQ(e, "w.json: dataset.input_shape: missing: the Keras model's input is ?x?x2 (sizes left unknown), so the dataset "
               "must give them (with --keras: --input-shape H,W,C)");
}

// A count beyond 32 bits is said to be over the limit, not "not a positive
// integer"; a missing one is said missing (Dense, LSTM, Embedding, Conv2D,
// MultiHeadAttention read their counts alike).
TEST(OneSetOfRules, ACountOverItsLimitIsSaidToBe) {
  auto error = [](const std::string& cls, json config) {
    return errorOf([&] { parseKerasModel(kerasWith(cls, std::move(config)), "m.json"); });
  };
  const json huge = 10000000000ull;
  EXPECT_NE(error("Dense", {{"units", huge}}).find("units: 10000000000 is over the limit of 4294967295"), std::string::npos);
  EXPECT_NE(error("Dense", {{"units", 0}}).find("units: expected a positive integer, got 0"), std::string::npos);
  EXPECT_NE(error("Conv2D", {{"filters", huge}, {"kernel_size", 3}}).find("filters: 10000000000 is over the limit"),
            std::string::npos);
  EXPECT_NE(error("Embedding", {{"input_dim", huge}, {"output_dim", 4}}).find("input_dim: 10000000000 is over the limit"),
            std::string::npos);
  EXPECT_NE(error("Dense", json::object()).find("units: missing"), std::string::npos);
}

// A file's loss or optimizer that is not modelled stops a workload that uses
// it, naming it; a workload that gives its own does not read the file's.
TEST(OneSetOfRules, AWorkloadsLossReplacesAnUnmodelledOneOfTheFile) {
  json keras = kerasWith("Dense", {{"units", 4}});
  keras["compile_config"] = {
      {"loss", {{"module", "tensorflow_addons.losses.focal_loss"}, {"class_name", "SigmoidFocalCrossEntropy"}, {"config", json::object()}}},
      {"optimizer", {{"module", "keras.optimizers"}, {"class_name", "Adafactor"}, {"config", json::object()}}}};
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ipusim_replaced_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << keras.dump();
  const json model = {{"keras", path}};
  const json dataset = {{"format", "synthetic"}};
  const std::string fileLoss = errorOf([&] {
    parseWorkload({{"dataset", dataset}, {"model", model}, {"optimizer", {{"type", "sgd"}}}}, "w.json");
  });
  const std::string fileOptimizer = errorOf([&] {
    parseWorkload({{"dataset", dataset}, {"model", model}, {"loss", "sparse_categorical_crossentropy"}}, "w.json");
  });
  const Workload replaced = parseWorkload({{"dataset", dataset}, {"model", model}, {"loss", "sparse_categorical_crossentropy"},
                                           {"optimizer", {{"type", "sgd"}}}},
                                          "w.json");
  std::filesystem::remove(path);
  EXPECT_NE(fileLoss.find("compile_config.loss"), std::string::npos) << fileLoss;
  EXPECT_NE(fileLoss.find("SigmoidFocalCrossEntropy"), std::string::npos) << fileLoss;
  EXPECT_NE(fileOptimizer.find("compile_config.optimizer"), std::string::npos) << fileOptimizer;
  EXPECT_NE(fileOptimizer.find("Adafactor"), std::string::npos) << fileOptimizer;
  EXPECT_EQ(replaced.loss.type, "sparse_categorical_crossentropy");
  EXPECT_EQ(replaced.optimizer.type, "sgd");
}

// Found by the third adversarial pass of issue 33: a workload's loss that
// does not fit the Keras model was blamed on the Keras file
// ("m.json: loss.from_logits: ..."), whose compile_config said otherwise.
TEST(OneSetOfRules, AWorkloadsLossThatDoesNotFitTheModelIsTheWorkloadsError) {
  json keras = kerasWith("Dense", {{"units", 4}});  // ends in Dense(10, softmax)
  keras["compile_config"] = {{"loss", "sparse_categorical_crossentropy"}, {"metrics", {"accuracy"}}};
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ipusim_loss_blame_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << keras.dump();
  const json model = {{"keras", path}};
  const json dataset = {{"format", "synthetic"}};
  const std::string logits = errorOf([&] {
    parseWorkload({{"dataset", dataset}, {"model", model},
                   {"loss", {{"type", "sparse_categorical_crossentropy"}, {"from_logits", true}}}},
                  "w.json");
  });
  const std::string metric = errorOf([&] {
    parseWorkload({{"dataset", dataset}, {"model", model}, {"loss", "mean_squared_error"}}, "w.json");
  });
  // Found by the fourth pass: the last layer's width against the workload's
  // loss (binary cross-entropy over 12 classes for a Dense(10)) named the
  // Keras file alone.
  const std::string width = errorOf([&] {
    parseWorkload({{"dataset", {{"format", "synthetic"}, {"classes", 12}}}, {"model", model}, {"loss", "binary_crossentropy"}},
                  "w.json");
  });
  std::filesystem::remove(path);
  EXPECT_EQ(width.rfind(path + ": the Keras model: ", 0), 0u) << width;
  EXPECT_NE(width.find("(the loss is w.json's, which replaces the Keras file's)"), std::string::npos) << width;
  EXPECT_EQ(logits.rfind("w.json: loss.from_logits: true with softmax", 0), 0u) << logits;
  EXPECT_EQ(metric.rfind(path + ": compile_config: metrics: 'accuracy' is an accuracy", 0), 0u) << metric;
  EXPECT_NE(metric.find("(the loss is w.json's, which replaces the Keras file's)"), std::string::npos) << metric;
}

}  // namespace
}  // namespace ipusim::scheduler::keras_workload_rules_test
