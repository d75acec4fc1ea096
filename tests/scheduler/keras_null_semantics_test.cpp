// null in a Keras config means what Keras makes of None, never ipusim's
// default: a boolean Keras tests for truth is false (use_bias, center,
// scale); a value Keras computes with is refused (momentum, rate, padding,
// strides of a convolution, a Reshape size); a key whose None Keras reads as
// a default gets that default (a pooling's strides: its pool_size; an
// initializer: add_weight's GlorotUniform; data_format: channels_last; a
// Dropout seed: none; TF 2.x's groups and steps_per_execution: 1).
#include "scheduler/models/keras_model.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ipusim::scheduler::keras_null_semantics_test {
namespace {

using nlohmann::json;

// A TF 2.x Sequential model: an 8x8x2 input, then `layers` ({class, config}).
json tf2Sequential(const std::vector<std::pair<std::string, json>>& layers) {
  json list = json::array();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    json config = layers[i].second;
    if (i == 0) config["batch_input_shape"] = json::array({nullptr, 8, 8, 2});
    list.push_back({{"class_name", layers[i].first}, {"config", config}});
  }
  return {{"class_name", "Sequential"}, {"config", {{"name", "m"}, {"layers", list}}}, {"keras_version", "2.4.0"}};
}

// The same as Keras 3 writes it (module keys, an InputLayer with batch_shape).
json keras3Sequential(const std::vector<std::pair<std::string, json>>& layers) {
  json list = json::array({{{"module", "keras.layers"}, {"class_name", "InputLayer"}, {"registered_name", nullptr},
                            {"config", {{"batch_shape", {nullptr, 8, 8, 2}}, {"dtype", "float32"}, {"name", "input"}}}}});
  for (const auto& [cls, config] : layers)
    list.push_back({{"module", "keras.layers"}, {"class_name", cls}, {"config", config}, {"registered_name", nullptr}});
  return {{"module", "keras"}, {"class_name", "Sequential"}, {"config", {{"name", "m"}, {"layers", list}}},
          {"registered_name", nullptr}};
}

const json kConv = {{"name", "conv"}, {"filters", 4}, {"kernel_size", 3}};
const json kFlatten = {{"name", "flatten"}};
const json kDense = {{"name", "dense"}, {"units", 10}, {"activation", "softmax"}};

// The model with `key` of layer `cls` (whose base config is `config`) set to null.
json withNull(const std::string& cls, json config, const std::string& key, bool keras3 = false) {
  config[key] = nullptr;
  std::vector<std::pair<std::string, json>> layers{{cls, config}};
  if (cls != "Flatten" && cls != "Dense") layers.push_back({"Flatten", kFlatten});
  if (cls != "Dense") layers.push_back({"Dense", kDense});
  return keras3 ? keras3Sequential(layers) : tf2Sequential(layers);
}

std::string errorOf(const json& j) {
  try {
    parseKerasModel(j, "m.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KerasNull, BooleansAreFalse) {
  EXPECT_FALSE(parseKerasModel(withNull("Conv2D", kConv, "use_bias"), "m.json").layers[0].useBias);
  EXPECT_FALSE(parseKerasModel(withNull("Dense", kDense, "use_bias"), "m.json").layers[0].useBias);
  const json bn = {{"name", "bn"}};
  EXPECT_FALSE(parseKerasModel(withNull("BatchNormalization", bn, "center"), "m.json").layers[0].center);
  EXPECT_TRUE(parseKerasModel(withNull("BatchNormalization", bn, "center"), "m.json").layers[0].scale);
  EXPECT_FALSE(parseKerasModel(withNull("BatchNormalization", bn, "scale"), "m.json").layers[0].scale);
  EXPECT_FALSE(parseKerasModel(withNull("GlobalAveragePooling2D", {{"name", "gap"}}, "keepdims"), "m.json").layers[0].keepDims);
}

TEST(KerasNull, ValuesKerasComputesWithAreRefused) {
  const std::string refused = ": null is refused: Keras computes with this value and fails on None (expected ";
  const json bn = {{"name", "bn"}};
  EXPECT_EQ(errorOf(withNull("BatchNormalization", bn, "momentum")),
            "m.json: layer 'bn' (BatchNormalization): momentum" + refused + "a number)");
  EXPECT_EQ(errorOf(withNull("BatchNormalization", bn, "epsilon")),
            "m.json: layer 'bn' (BatchNormalization): epsilon" + refused + "a number)");
  EXPECT_EQ(errorOf(withNull("BatchNormalization", bn, "axis")),
            "m.json: layer 'bn' (BatchNormalization): axis" + refused + "the channels axis, -1)");
  EXPECT_EQ(errorOf(withNull("Dropout", {{"name", "drop"}, {"rate", 0.5}}, "rate")),
            "m.json: layer 'drop' (Dropout): rate" + refused + "a number)");
  EXPECT_EQ(errorOf(withNull("Conv2D", kConv, "padding")),
            "m.json: layer 'conv' (Conv2D): padding" + refused + "'valid' or 'same')");
  EXPECT_EQ(errorOf(withNull("Conv2D", kConv, "strides")),
            "m.json: layer 'conv' (Conv2D): strides" + refused + "a positive integer or [rows, columns])");
  EXPECT_EQ(errorOf(withNull("Conv2D", kConv, "filters")),
            "m.json: layer 'conv' (Conv2D): filters" + refused + "a positive integer)");
  EXPECT_EQ(errorOf(withNull("MaxPooling2D", {{"name", "pool"}, {"pool_size", 2}}, "padding")),
            "m.json: layer 'pool' (MaxPooling2D): padding" + refused + "'valid' or 'same')");
  EXPECT_EQ(errorOf(withNull("Dense", kDense, "units")), "m.json: layer 'dense' (Dense): units" + refused + "a positive integer)");
  EXPECT_EQ(errorOf(withNull("ReLU", {{"name", "relu"}}, "negative_slope")),
            "m.json: layer 'relu' (ReLU): negative_slope" + refused + "a number)");
  EXPECT_EQ(errorOf(withNull("LeakyReLU", {{"name", "lrelu"}}, "alpha")),
            "m.json: layer 'lrelu' (LeakyReLU): alpha" + refused + "a number)");
  EXPECT_EQ(errorOf(withNull("Rescaling", {{"name", "r"}, {"scale", 0.5}}, "offset")),
            "m.json: layer 'r' (Rescaling): offset" + refused + "a number or a list)");
  EXPECT_EQ(errorOf(withNull("Reshape", {{"name", "r"}, {"target_shape", {128}}}, "target_shape")),
            "m.json: layer 'r' (Reshape): target_shape" + refused + "a list of integers)");
}

TEST(KerasNull, DefaultsWhereKerasReadsNoneAsOne) {
  // A pooling's strides: its pool_size.
  const KerasModel pool = parseKerasModel(withNull("MaxPooling2D", {{"name", "pool"}, {"pool_size", 2}}, "strides"), "m.json");
  EXPECT_EQ(pool.layers[0].strides, (std::array<std::uint32_t, 2>{2, 2}));
  EXPECT_EQ(pool.layers[0].outputShape, (std::vector<std::uint64_t>{4, 4, 2}));
  // data_format: keras.config.image_data_format(), channels_last.
  EXPECT_EQ(parseKerasModel(withNull("Conv2D", kConv, "data_format"), "m.json").layers[0].outputShape,
            (std::vector<std::uint64_t>{6, 6, 4}));
  // An activation: linear.
  EXPECT_EQ(parseKerasModel(withNull("Conv2D", kConv, "activation"), "m.json").layers[0].activation, Activation::Linear);
  // A Dropout seed: none (the workload's seed then).
  EXPECT_FALSE(parseKerasModel(withNull("Dropout", {{"name", "drop"}, {"rate", 0.5}}, "seed"), "m.json").layers[0].seeded);
  // ReLU's max_value: no cap.
  EXPECT_FALSE(parseKerasModel(withNull("ReLU", {{"name", "relu"}}, "max_value"), "m.json").layers[0].activationParams.maxValue);
}

TEST(KerasNull, InitializerIsAddWeightsGlorotUniform) {
  const KerasModel m = parseKerasModel(withNull("Dense", kDense, "bias_initializer"), "m.json");
  ASSERT_EQ(m.layers[0].initializers.count("bias"), 1u);
  EXPECT_EQ(m.layers[0].initializers.at("bias"), glorotUniformSpec());
  // A kernel's null is its default already: nothing of its own.
  EXPECT_EQ(parseKerasModel(withNull("Dense", kDense, "kernel_initializer"), "m.json").layers[0].initializers.count("kernel"), 0u);
  const json bn = {{"name", "bn"}};
  EXPECT_EQ(parseKerasModel(withNull("BatchNormalization", bn, "beta_initializer"), "m.json").layers[0].initializers.at("beta"),
            glorotUniformSpec());
  EXPECT_EQ(errorOf(withNull("BatchNormalization", bn, "moving_mean_initializer")),
            "m.json: layer 'bn' (BatchNormalization): moving_mean_initializer: null (Keras draws it GlorotUniform) is not "
            "modelled (moving statistics start as Keras's defaults: zeros and ones)");
  EXPECT_EQ(errorOf(withNull("PReLU", {{"name", "p"}}, "alpha_initializer")),
            "m.json: layer 'p' (PReLU): alpha_initializer: null (Keras then draws alpha GlorotUniform) is not modelled "
            "(Zeros, Ones or Constant(value))");
}

// TF 2.x and Keras 3 read some None differently: each file as its Keras would.
TEST(KerasNull, WhatEachKerasMakesOfIt) {
  EXPECT_EQ(parseKerasModel(withNull("Conv2D", kConv, "groups"), "m.json").layers[0].groups, 1u);  // `groups or 1`
  EXPECT_EQ(errorOf(withNull("Conv2D", kConv, "groups", true)),
            "m.json: layer 'conv' (Conv2D): groups: null is refused: Keras computes with this value and fails on None "
            "(expected an integer)");
  const json softmax = {{"name", "sm"}};
  json tf2 = tf2Sequential({{"Flatten", kFlatten}, {"Dense", {{"name", "d"}, {"units", 10}}}, {"Softmax", {{"name", "sm"}, {"axis", nullptr}}}});
  // tf.nn.softmax(axis=None): the last axis, as when no axis is given (1, of [batch, 10]).
  EXPECT_EQ(parseKerasModel(tf2, "m.json").layers[2].axis, 1);
  tf2["config"]["layers"][2]["config"].erase("axis");
  EXPECT_EQ(parseKerasModel(tf2, "m.json").layers[2].axis, 1);
  EXPECT_EQ(errorOf(withNull("Softmax", softmax, "axis", true)),
            "m.json: layer 'sm' (Softmax): axis: null (Keras 3: one softmax over every element of the batch) is not "
            "modelled; give an axis");
}

TEST(KerasNull, ReshapeSizeBeyondInt64IsNotMinusOne) {
  json j = tf2Sequential({{"Flatten", kFlatten}, {"Reshape", {{"name", "r"}, {"target_shape", {json(18446744073709551615ull)}}}},
                          {"Dense", kDense}});
  EXPECT_EQ(errorOf(j), "m.json: layer 'r' (Reshape): target_shape: expected integers, got [18446744073709551615]");
  j = tf2Sequential({{"Flatten", kFlatten}, {"Dense", {{"name", "d"}, {"units", json(18446744073709551615ull)}}}});
  EXPECT_EQ(errorOf(j), "m.json: layer 'd' (Dense): units: 18446744073709551615 is over the limit of 4294967295 (a 32-bit count)");
}

TEST(KerasNull, CompileConfig) {
  json j = keras3Sequential({{"Flatten", kFlatten}, {"Dense", kDense}});
  j["compile_config"] = {{"optimizer", {{"module", "keras.optimizers"}, {"class_name", "SGD"}, {"registered_name", nullptr},
                                        {"config", {{"learning_rate", 0.1}, {"momentum", 0.9}, {"nesterov", nullptr}}}}},
                         {"loss", "sparse_categorical_crossentropy"}, {"steps_per_execution", nullptr}};
  EXPECT_EQ(errorOf(j), "m.json: compile_config: steps_per_execution: null is refused: Keras computes with this value and "
                        "fails on None (expected an integer)");
  j["compile_config"]["steps_per_execution"] = 4;
  const KerasModel m = parseKerasModel(j, "m.json");
  EXPECT_FALSE(m.optimizer->nesterov);  // `if self.nesterov:`
  EXPECT_EQ(m.stepsPerExecution, 4u);
  j["compile_config"]["steps_per_execution"] = 0;
  EXPECT_EQ(errorOf(j), "m.json: compile_config: steps_per_execution: expected a positive integer, got 0");
  // TF 2.x's compile runs `steps_per_execution or 1`.
  json tf2 = tf2Sequential({{"Flatten", kFlatten}, {"Dense", kDense}});
  tf2["compile_config"] = {{"optimizer", "adam"}, {"loss", "sparse_categorical_crossentropy"}, {"steps_per_execution", nullptr}};
  EXPECT_EQ(parseKerasModel(tf2, "m.json").stepsPerExecution, 1u);
}

}  // namespace
}  // namespace ipusim::scheduler::keras_null_semantics_test
