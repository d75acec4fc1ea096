// Models with several inputs and outputs (Keras's input_layers and
// output_layers): the inputs read in config.input_layers' order, each
// example streamed as the tuple of their values and split on the device; the
// outputs each trained with the loss on the example's label, their losses
// added up. Compiled and run in the SystemC model, the Keras file (in either
// format) computes the CPU reference's losses over 20 steps (relative 1e-4);
// errors name the file, the layer or key, and what was expected.
// One simulation per test (per process).
#include "training_harness.hpp"

#include "scheduler/graph/training_graph.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

#include <unistd.h>

namespace ipusim::testing::several_inputs_outputs_test {
namespace {

using scheduler::KerasModel;
using scheduler::LayerSpec;

constexpr std::uint64_t kSteps = 20;

std::string dataFile(const std::string& name) { return sourcePath("tests/data/keras/" + name); }

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

nlohmann::json job(const std::string& keras) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 7, "classes": 10, "examples": 64},
    "training": {"steps": 20, "steps_per_execution": 4},
    "optimizer": {"type": "sgd", "learning_rate": 0.05, "momentum": 0.9},
    "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 3})");
  j["model"] = {{"keras", keras}};
  return j;
}

const LayerSpec& named(const KerasModel& m, const std::string& name) {
  for (const auto& l : m.layers)
    if (l.name == name) return l;
  throw std::logic_error("no layer " + name);
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

// `j` in a file of its own (a workload reads its Keras model from a file).
std::string written(const nlohmann::json& j) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("several_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << j.dump();
  return path;
}

void expectMentions(const std::string& message, const std::vector<std::string>& fragments) {
  for (const auto& f : fragments) EXPECT_NE(message.find(f), std::string::npos) << "'" << f << "' not in: " << message;
}

void expectRead(const std::string& file) {
  const KerasModel m = scheduler::loadKerasModel(dataFile(file));
  // config.input_layers' order ("meta" first), not the layers' order.
  ASSERT_EQ(m.inputs.size(), 2u);
  EXPECT_EQ(m.inputs[0].name, "meta");
  EXPECT_EQ(m.inputs[0].shape, (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(m.inputs[1].name, "image");
  EXPECT_EQ(m.inputs[1].shape, (std::vector<std::uint64_t>{8, 8, 1}));
  EXPECT_EQ(m.inputShape, (std::vector<std::uint64_t>{69}));  // the streamed tuple: 5 + 64
  EXPECT_EQ(named(m, "meta_dense").inputs, (std::vector<std::size_t>{scheduler::modelInput(0)}));
  EXPECT_EQ(named(m, "conv").inputs, (std::vector<std::size_t>{scheduler::modelInput(1)}));
  ASSERT_EQ(m.outputs.size(), 2u);
  EXPECT_EQ(m.layers[m.outputs[0]].name, "main");
  EXPECT_EQ(m.layers[m.outputs[1]].name, "aux");
  EXPECT_EQ(m.layers.back().name, "aux");  // the last output is the last layer

  // The training graph: each input's columns sliced out of the images, a
  // loss per output, their per-example losses added.
  const scheduler::Workload w = scheduler::parseWorkload(job(dataFile(file)), "several.json");
  EXPECT_EQ(w.dataset.features, 69u);
  const scheduler::OpGraph g = scheduler::buildTrainingGraph(w);
  EXPECT_EQ(g.values[g.images].shape, (std::vector<std::uint64_t>{8, 69}));
  std::vector<std::vector<std::uint64_t>> slices;
  std::size_t lossOps = 0, sums = 0;
  for (const scheduler::Op& op : g.ops) {
    if (op.kind == scheduler::OpKind::Slice && op.inputs[0] == g.images) slices.push_back(op.blocks);
    lossOps += op.kind == scheduler::OpKind::SoftmaxCrossEntropy;
    sums += op.kind == scheduler::OpKind::Add && op.layer == "loss";
  }
  EXPECT_EQ(slices, (std::vector<std::vector<std::uint64_t>>{{0, 5, 69}, {5, 64, 69}}));
  EXPECT_EQ(lossOps, 2u);
  EXPECT_EQ(sums, 1u);
}

TEST(SeveralInputsOutputs, Tf2FileRead) { expectRead("several_inputs_outputs_tf2.json"); }
TEST(SeveralInputsOutputs, Keras3FileRead) { expectRead("several_inputs_outputs_keras3.json"); }

TEST(SeveralInputsOutputs, Tf2TrainsAsTheReference) {
  expectSameLosses(runTraining(scheduler::parseWorkload(job(dataFile("several_inputs_outputs_tf2.json")), "several.json"),
                               kSteps),
                   kSteps);
}
TEST(SeveralInputsOutputs, Keras3TrainsAsTheReferenceInHalf) {
  nlohmann::json j = job(dataFile("several_inputs_outputs_keras3.json"));
  j["model"]["dtype"] = "float16";
  const TrainingLosses r = runTraining(scheduler::parseWorkload(j, "several.json"), kSteps);
  ASSERT_EQ(r.simulated.size(), kSteps);
  double worst = 0;
  for (std::size_t s = 0; s < kSteps; ++s)
    worst = std::max(worst, std::fabs(double(r.simulated[s]) - r.reference[s]) / r.reference[s]);
  EXPECT_LT(worst, 0.01);
  EXPECT_GT(worst, 0.0);
}

// The same in ipusim's own format (model.inputs, model.outputs), with a
// binary cross-entropy over both outputs.
constexpr const char* kOwnFormat = R"({
  "inputs": [{"name": "image", "shape": [6, 6, 2]}, {"name": "meta", "shape": [3]}],
  "outputs": ["aux", "main"],
  "layers": [
    {"type": "conv2d", "filters": 3, "kernel_size": 3, "activation": "relu", "name": "conv", "inputs": ["image"]},
    {"type": "flatten", "name": "flat"},
    {"type": "dense", "units": 5, "activation": "tanh", "name": "meta_dense", "inputs": ["meta"]},
    {"type": "concatenate", "inputs": ["flat", "meta_dense"], "name": "both"},
    {"type": "dense", "units": 10, "activation": "sigmoid", "name": "main"},
    {"type": "dense", "units": 10, "activation": "sigmoid", "name": "aux", "inputs": ["meta_dense"]}]})";

nlohmann::json ownFormatJob() {
  nlohmann::json j = job("");
  j["model"] = nlohmann::json::parse(kOwnFormat);
  j["loss"] = "binary_crossentropy";
  return j;
}

TEST(SeveralInputsOutputs, OwnFormatTrainsAsTheReference) {
  const scheduler::Workload w = scheduler::parseWorkload(ownFormatJob(), "several.json");
  EXPECT_EQ(w.dataset.features, 75u);  // 6 x 6 x 2 + 3
  ASSERT_EQ(w.outputs.size(), 2u);
  EXPECT_EQ(w.layers[w.outputs[0]].name, "aux");
  EXPECT_EQ(w.layers[w.outputs[1]].name, "main");
  expectSameLosses(runTraining(w, kSteps), kSteps);
}

TEST(SeveralInputsOutputsErrors, OwnFormatNeedsTwoInputsWithShapes) {
  nlohmann::json j = ownFormatJob();
  j["model"]["inputs"] = {{{"name", "image"}, {"shape", {6, 6, 2}}}};
  expectMentions(errorOf([&] { scheduler::parseWorkload(j, "several.json"); }),
                 {"several.json", "model.inputs", "two or more", "dataset.input_shape"});
  j = ownFormatJob();
  j["model"]["inputs"][1].erase("shape");
  expectMentions(errorOf([&] { scheduler::parseWorkload(j, "several.json"); }),
                 {"several.json", "model.inputs[1].shape", "missing"});
  j = ownFormatJob();
  j["model"]["layers"][0]["inputs"] = {"picture"};
  expectMentions(errorOf([&] { scheduler::parseWorkload(j, "several.json"); }),
                 {"model.layers[0].inputs", "'picture' names no layer", "'image', 'meta'"});
  j = ownFormatJob();
  j["model"]["outputs"] = {"aux", "nowhere"};
  expectMentions(errorOf([&] { scheduler::parseWorkload(j, "several.json"); }),
                 {"model.outputs", "'nowhere' names no layer"});
}

TEST(SeveralInputsOutputsErrors, RealImagesCannotFeedSeveralInputs) {
  nlohmann::json j = job(dataFile("several_inputs_outputs_tf2.json"));
  j["dataset"]["format"] = "idx";
  expectMentions(errorOf([&] { scheduler::parseWorkload(j, "several.json"); }),
                 {"several.json", "dataset.format", "2 inputs", "'meta', 'image'", "only synthetic"});
}

TEST(SeveralInputsOutputsErrors, InputLayersNamingNoInput) {
  nlohmann::json j = readJson(dataFile("several_inputs_outputs_tf2.json"));
  j["config"]["input_layers"][0][0] = "metadata";
  expectMentions(errorOf([&] { scheduler::parseKerasModel(j, "model.json"); }),
                 {"model.json", "config.input_layers", "'metadata' names no InputLayer"});
}

TEST(SeveralInputsOutputsErrors, AnInputSizeLeftUnknown) {
  nlohmann::json j = readJson(dataFile("several_inputs_outputs_tf2.json"));
  j["config"]["layers"][1]["config"]["batch_input_shape"] = {nullptr, nullptr};
  expectMentions(errorOf([&] { scheduler::parseKerasModel(j, "model.json"); }),
                 {"model.json", "layer 'meta' (InputLayer)", "unknown", "every input's shape"});
}

TEST(SeveralInputsOutputsErrors, OutputReadByAnotherLayerUnderCrossEntropy) {
  nlohmann::json j = readJson(dataFile("several_inputs_outputs_tf2.json"));
  // The main classifier reads the auxiliary one's probabilities too.
  for (auto& l : j["config"]["layers"])
    if (l["name"] == "concatenate") l["inbound_nodes"][0].push_back({"aux", 0, 0, nlohmann::json::object()});
  const std::string path = written(j);
  expectMentions(errorOf([&] { scheduler::parseWorkload(job(path), "several.json"); }),
                 {"the output layer 'aux'", "read by layer 'concatenate'", "sparse_categorical_crossentropy"});
}

TEST(SeveralInputsOutputsErrors, AnOutputOfTheWrongSize) {
  nlohmann::json j = readJson(dataFile("several_inputs_outputs_tf2.json"));
  for (auto& l : j["config"]["layers"])
    if (l["name"] == "aux") l["config"]["units"] = 3;
  const std::string path = written(j);
  expectMentions(errorOf([&] { scheduler::parseWorkload(job(path), "several.json"); }),
                 {"the output layer 'aux'", "outputs 3 per example", "needs 10"});
}

}  // namespace
}  // namespace ipusim::testing::several_inputs_outputs_test
