// Layer and group normalization (issue "Every model users bring (2)"): Keras's
// LayerNormalization over the last axis of a sequence (Dense on [steps,
// features] before and after it, as a transformer block has it), over the
// two trailing axes of an image, without scale or center, and first in a
// model (no input gradient); GroupNormalization over groups of channels.
// Each model, compiled and run in the SystemC
// model, computes the same losses as the CPU reference
// (cpu_reference_layer_norm.cpp) over 20 steps within 1e-4 relative and ends
// with the same weights (gamma and beta among them); float16 and
// mixed_float16 track the float32 reference within 1%. Bad axes and
// epsilons are refused by name, from the workload and from a Keras file.
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

namespace ipusim::testing::layer_normalization_test {
namespace {

constexpr std::uint64_t kSteps = 20;
const nlohmann::json kAdam = {{"type", "adam"}, {"learning_rate", 0.01}};
const nlohmann::json kSgd = {{"type", "sgd"}, {"learning_rate", 0.01}, {"momentum", 0.9}};

// A transformer block's shape: Dense over [8 steps, 16 features], layer
// norms with and without scale and center, a residual add.
constexpr const char* kSequence = R"([
  {"type": "dense", "units": 16, "name": "project"},
  {"type": "layer_normalization", "name": "norm1"},
  {"type": "dense", "units": 32, "activation": "gelu", "name": "ffn1"},
  {"type": "dense", "units": 16, "name": "ffn2"},
  {"type": "add", "inputs": ["norm1", "ffn2"], "name": "residual"},
  {"type": "layer_normalization", "epsilon": 1e-5, "center": false, "name": "norm2"},
  {"type": "dense", "units": 16, "name": "d3"},
  {"type": "layer_normalization", "scale": false, "name": "norm3"},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(LayerNormalizationAcceptance, OverTheLastAxisOfASequence) {
  expectSameTraining(smallJob(kSequence, {8, 16}, kAdam, 5), "sequence.json", kSteps);
}

// Over the two trailing axes of an image (Keras's axis [-2, -1]: a gamma per
// column and channel), and first in the model: only its weights train.
constexpr const char* kImage = R"([
  {"type": "layer_normalization", "axis": [-2, -1]},
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "activation": "relu"},
  {"type": "layer_normalization", "axis": [2, 3]},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(LayerNormalizationAcceptance, OverTrailingAxesOfAnImage) {
  expectSameTraining(smallJob(kImage, {6, 6, 3}, kAdam, 9), "image.json", kSteps);
}

// GroupNormalization (groups of channels, over every position): 2 groups
// of an image's 4 channels (the transposed path), one per channel (-1),
// one group (no transpose), and 4 groups of a dense layer's 8 units (one
// position, no transpose), without center once.
constexpr const char* kGroups = R"([
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "use_bias": false},
  {"type": "group_normalization", "groups": 2, "name": "gn_pairs"},
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "activation": "relu", "use_bias": false},
  {"type": "group_normalization", "groups": -1, "epsilon": 1e-5, "name": "gn_instance"},
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "use_bias": false},
  {"type": "group_normalization", "groups": 1, "center": false, "name": "gn_layer"},
  {"type": "flatten"},
  {"type": "dense", "units": 8, "use_bias": false},
  {"type": "group_normalization", "groups": 4, "name": "gn_dense"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

// As such models are built, without a bias before a norm (which would
// cancel it: its gradient is rounding noise only).
// Small steps: norms over a few values of 4 random examples make the
// trajectory chaotic (PyTorch's float32 leaves its float64 by 16% within 20
// steps at SGD 0.01, momentum 0.9), and popnn's one-pass statistics round
// more than the reference's two passes.
TEST(GroupNormalizationAcceptance, GroupsOfChannels) {
  expectSameTraining(smallJob(kGroups, {8, 8, 2}, {{"type", "adam"}, {"learning_rate", 0.001}}, 4), "groups.json", kSteps);
}

std::string errorOf(const char* layers, const nlohmann::json& inputShape);  // the workload's error, below

TEST(GroupNormalizationAcceptance, BadGroupsAreNamed) {
  const std::string more = errorOf(R"([{"type": "dense", "units": 4}, {"type": "group_normalization", "groups": 8},
                                       {"type": "dense", "units": 10}])", {8});
  EXPECT_NE(more.find("8 groups cannot be more than the 4 channels"), std::string::npos) << more;
  const std::string divide = errorOf(R"([{"type": "dense", "units": 6}, {"type": "group_normalization", "groups": 4},
                                         {"type": "dense", "units": 10}])", {8});
  EXPECT_NE(divide.find("4 does not divide the 6 channels"), std::string::npos) << divide;
  const std::string zero = errorOf(R"([{"type": "dense", "units": 6}, {"type": "group_normalization", "groups": 0},
                                       {"type": "dense", "units": 10}])", {8});
  EXPECT_NE(zero.find("groups: expected a positive integer, or -1"), std::string::npos) << zero;
}

// Half precision, with SGD (Adam's epsilon of 1e-7 is below float16's range).

TEST(LayerNormalizationAcceptance, Float16TracksFloat32) {
  expectHalfTracksFloat32(smallJob(kSequence, {8, 16}, kSgd, 5), "float16", "sequence.json", kSteps);
}

TEST(LayerNormalizationAcceptance, MixedFloat16TracksFloat32) {
  expectHalfTracksFloat32(smallJob(kSequence, {8, 16}, kSgd, 5), "mixed_float16", "sequence.json", kSteps);
}

TEST(LayerNormalizationAcceptance, RunsItsOwnVertices) {
  const scheduler::Workload w = scheduler::parseWorkload(smallJob(kSequence, {8, 16}, kAdam, 5), "sequence.json");
  const scheduler::CompiledWorkload c = scheduler::compile(w);
  std::set<std::string> codelets;
  for (const auto& cs : c.exe.computeSets)
    for (const auto& v : cs.vertices) codelets.insert(v.codelet);
  EXPECT_TRUE(codelets.count("LayerNormalise"));
  EXPECT_TRUE(codelets.count("LayerNormInputGrad"));
}

// Keras files as tf-keras and Keras 3 write them (make_layer_normalization.py).
void expectKerasFileTrains(const std::string& file) {
  nlohmann::json j = smallJob("[]", {8, 16}, kAdam, 5);
  j["model"] = {{"keras", sourcePath("tests/data/keras/" + file)}};
  const scheduler::Workload w = scheduler::parseWorkload(j, "keras.json");
  std::size_t norms = 0;
  for (const auto& l : w.layers)
    if (l.kind == scheduler::layer_kind::kLayerNormalization) {
      ++norms;
      EXPECT_EQ(l.axes, std::vector<std::int64_t>{2}) << file << ": " << l.name;
    }
  EXPECT_EQ(norms, 2u) << file;
  expectSameTraining(j, "keras.json", kSteps);
}

TEST(LayerNormalizationAcceptance, KerasTf2File) { expectKerasFileTrains("layer_normalization_tf2.json"); }
TEST(LayerNormalizationAcceptance, Keras3File) { expectKerasFileTrains("layer_normalization_keras3.json"); }

TEST(LayerNormalizationAcceptance, KerasRmsScalingIsRefused) {
  nlohmann::json keras = nlohmann::json::parse(std::ifstream(sourcePath("tests/data/keras/layer_normalization_keras3.json")));
  for (auto& l : keras["config"]["layers"])
    if (l["class_name"] == "LayerNormalization") l["config"]["rms_scaling"] = true;
  try {
    scheduler::parseKerasModel(keras, "rms.json");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rms_scaling"), std::string::npos) << what;
    EXPECT_NE(what.find("norm1"), std::string::npos) << what;
  }
}

// axis: null is Keras's TypeError ("Expected an int or a list/tuple of
// ints"), not the last axis: refused naming the layer and key.
TEST(LayerNormalizationAcceptance, KerasNullAxisIsRefused) {
  for (const char* file : {"layer_normalization_keras3.json", "layer_normalization_tf2.json"}) {
    nlohmann::json keras = nlohmann::json::parse(std::ifstream(sourcePath(std::string("tests/data/keras/") + file)));
    for (auto& l : keras["config"]["layers"])
      if (l["config"].value("name", "") == "norm2") l["config"]["axis"] = nullptr;
    try {
      scheduler::parseKerasModel(keras, "null_axis.json");
      ADD_FAILURE() << file << ": no error";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("layer 'norm2' (LayerNormalization)"), std::string::npos) << what;
      EXPECT_NE(what.find("axis: null is refused"), std::string::npos) << what;
      EXPECT_NE(what.find("an integer or a list of integers"), std::string::npos) << what;
    }
  }
}

std::string errorOf(const char* layers, const nlohmann::json& inputShape) {
  try {
    scheduler::parseWorkload(smallJob(layers, inputShape, kAdam, 1), "bad.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(LayerNormalizationAcceptance, BadAxesAndEpsilonsAreNamed) {
  const std::string leading = errorOf(R"([{"type": "layer_normalization", "axis": 1}, {"type": "flatten"},
                                          {"type": "dense", "units": 10}])", {8, 16});
  EXPECT_NE(leading.find("axis"), std::string::npos) << leading;
  EXPECT_NE(leading.find("not the last ones"), std::string::npos) << leading;
  const std::string batch = errorOf(R"([{"type": "layer_normalization", "axis": 0}, {"type": "flatten"},
                                        {"type": "dense", "units": 10}])", {8, 16});
  EXPECT_NE(batch.find("the batch's"), std::string::npos) << batch;
  const std::string epsilon = errorOf(R"([{"type": "layer_normalization", "epsilon": 0}, {"type": "flatten"},
                                          {"type": "dense", "units": 10}])", {8, 16});
  EXPECT_NE(epsilon.find("epsilon: expected a positive number"), std::string::npos) << epsilon;
  const std::string type = errorOf(R"([{"type": "layer_normalization", "axis": "last"}, {"type": "flatten"},
                                       {"type": "dense", "units": 10}])", {8, 16});
  EXPECT_NE(type.find("expected an integer or a list of integers"), std::string::npos) << type;
}

}  // namespace
}  // namespace ipusim::testing::layer_normalization_test
