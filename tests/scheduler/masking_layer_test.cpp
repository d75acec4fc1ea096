// Keras's Masking layer: a step whose every feature equals mask_value is
// zeroed and masked for the layers after it, as an Embedding's mask_zero
// masks a padded token. Each model trains as the CPU reference (which
// writes the mask and the product again) over 20 steps within 1e-4; a
// Keras 2 file's Masking is read; what is not modelled is refused by key.
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace ipusim::testing::masking_layer_test {
namespace {

constexpr std::uint64_t kSteps = 20;
const nlohmann::json kAdam = {{"type", "adam"}, {"learning_rate", 0.01}};

// Masked steps need values equal to mask_value: a ReLU per step gives exact
// zeros (both of its 2 units are zero on about a quarter of the steps), and
// Masking(0) masks those steps for the LSTM.
const char* kMaskedSequence = R"([
    {"type": "dense", "units": 2, "activation": "relu", "name": "per_step"},
    {"type": "masking", "mask_value": 0.0, "name": "masking"},
    {"type": "lstm", "units": 4, "name": "lstm"},
    {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(MaskingLayer, StepsOfTheMaskValueAreMaskedAsTheReferenceMasksThem) {
  expectSameTraining(smallJob(kMaskedSequence, {7, 3}, kAdam, 41), "masking.json", kSteps);
}

// The mask carried through a Dense into a masked mean.
TEST(MaskingLayer, ItsMaskIsCarriedAsAnEmbeddingsIs) {
  expectSameTraining(smallJob(R"([
    {"type": "dense", "units": 2, "activation": "relu", "name": "per_step"},
    {"type": "masking", "name": "masking"},
    {"type": "dense", "units": 5, "activation": "tanh", "name": "carried"},
    {"type": "global_average_pooling1d", "name": "mean"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {7, 3}, kAdam, 43), "masking_mean.json", kSteps);  // (seed 43 masks steps: a reference without the mask fails)
}

TEST(MaskingLayer, MixedPrecisionTracksFloat32) {
  expectHalfTracksFloat32(smallJob(kMaskedSequence, {7, 3}, kAdam, 41), "mixed_float16", "masking.json", kSteps);
}

// Keras 2 writes Masking as the Sequential's first layer, with the input shape.
TEST(MaskingLayer, AKeras2FilesMaskingIsRead) {
  const nlohmann::json masking = nlohmann::json::parse(R"({"class_name": "Masking", "config": {"name": "masking_1",
    "trainable": true, "batch_input_shape": [null, 6, 4], "dtype": "float32", "mask_value": -1.0}})");
  const nlohmann::json lstm = nlohmann::json::parse(R"({"class_name": "LSTM", "config": {"name": "lstm_1", "trainable": true,
    "return_sequences": false, "return_state": false, "go_backwards": false, "stateful": false, "unroll": false, "units": 3,
    "activation": "tanh", "recurrent_activation": "sigmoid", "use_bias": true,
    "kernel_initializer": {"class_name": "VarianceScaling", "config": {"scale": 1.0, "mode": "fan_avg", "distribution": "uniform", "seed": null}},
    "recurrent_initializer": {"class_name": "Orthogonal", "config": {"gain": 1.0, "seed": null}},
    "bias_initializer": {"class_name": "Zeros", "config": {}}, "unit_forget_bias": true, "kernel_regularizer": null,
    "recurrent_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null,
    "recurrent_constraint": null, "bias_constraint": null, "dropout": 0.0, "recurrent_dropout": 0.0, "implementation": 1}})");
  const nlohmann::json model = {{"class_name", "Sequential"}, {"keras_version", "2.2.4"}, {"backend", "tensorflow"},
                                {"config", {{"name", "sequential_1"}, {"layers", {masking, lstm}}}}};
  const scheduler::KerasModel m = scheduler::parseKerasModel(model, "masking.json");
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].kind, "masking");
  EXPECT_DOUBLE_EQ(m.layers[0].maskValue, -1.0);
}

TEST(MaskingLayer, AnInputOfOtherRanksIsRefusedNamingTheLayer) {
  try {
    scheduler::compile(scheduler::parseWorkload(smallJob(R"([
      {"type": "masking", "name": "masking"},
      {"type": "flatten"},
      {"type": "dense", "units": 10, "activation": "softmax"}])", {4, 4, 2}, kAdam, 1), "m.json"));
    ADD_FAILURE() << "a masking over images was compiled";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers[0]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[steps, features]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::testing::masking_layer_test
