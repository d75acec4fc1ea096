// Found by the tenth adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <string>

namespace ipusim::test::test_adversarial_pass_10 {
namespace {

// The operations summary counted no FLOPs for a convolution: every
// convolution vertex (ConvPartial*, ConvWeightUpdate*) counted 0, so
// `report --ops` (and the viewer and the Python reader, which read the same
// program_work rows) gave a convnet's conv2d 0 FLOPs, 0 GFLOP/s and 0% of
// the AMP peak, while `ipusim compile` counted its multiply-accumulates.
TEST(AdversarialPass10, AConvolutionCountsItsMultiplyAccumulatesInTheOperationsSummary) {
  ScratchDir dir("conv-flops");
  const fs::path workload = dir.path() / "conv.json";
  std::ofstream(workload) << R"({
    "name": "conv_flops",
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8, 8, 2], "classes": 10, "examples": 16},
    "model": {"layers": [
      {"type": "conv2d", "filters": 8, "kernel_size": [3, 3], "padding": "same", "name": "c1"},
      {"type": "conv2d", "filters": 4, "kernel_size": [3, 3], "padding": "valid", "name": "c2"},
      {"type": "flatten"},
      {"type": "dense", "units": 10, "activation": "softmax"}]},
    "optimizer": {"type": "sgd", "learning_rate": 0.01},
    "training": {"steps": 2, "steps_per_execution": 2},
    "ipu": {"arch": "ipu2", "tiles": 16}})";
  auto r = runCommand(withReports(dir.path() / "rep") + ipusimBinary() + " run " + quote(workload.string()) +
                      " --synthetic-data");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  r = runCommand(ipusimBinary() + " report " + quote((dir.path() / "rep").string()) + " --ops --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const nlohmann::json summary = nlohmann::json::parse(r.output);
  std::map<std::string, double> flops;
  for (const auto& row : summary.at("operations"))
    flops[row.at("layer").get<std::string>() + "/" + row.at("op").get<std::string>()] = row.at("flops_per_step").get<double>();
  // 2 per multiply-accumulate, every output element meeting a whole window
  // (the padding's products included, as compile counts them):
  // c1: batch 4 x 8 x 8 outputs x 8 filters x 3 x 3 x 2 channels.
  EXPECT_DOUBLE_EQ(flops["c1/conv2d"], 2.0 * 4 * 8 * 8 * 8 * 3 * 3 * 2);
  // c2 (valid): 4 x 6 x 6 x 4 x 3 x 3 x 8; its input gradient meets every
  // one of c1's outputs with c2's window: 4 x 8 x 8 x 8 x 3 x 3 x 4.
  EXPECT_DOUBLE_EQ(flops["c2/conv2d"], 2.0 * 4 * 6 * 6 * 4 * 3 * 3 * 8);
  EXPECT_DOUBLE_EQ(flops["c2/input_grad"], 2.0 * 4 * 8 * 8 * 8 * 3 * 3 * 4);
  // The weight gradient: each of c2's 3 x 3 x 8 x 4 kernel values sums over
  // the 4 x 6 x 6 output positions.
  EXPECT_DOUBLE_EQ(flops["c2/kernel_grad"], 2.0 * 3 * 3 * 8 * 4 * 4 * 6 * 6);
}

// A Keras call's training argument (Dropout(0.5)(x, training=False), as a
// public text-similarity model writes it, or the transfer-learning idiom
// base_model(x, training=False)) fixes the layer's mode whatever the task:
// it was ignored, so fit dropped what Keras keeps (and predict kept what a
// training=True call drops). It is refused, in both file formats; null (no
// argument) still runs.
TEST(AdversarialPass10, ACallThatFixesTheTrainingModeIsRefused) {
  ScratchDir dir("call-training");
  nlohmann::json k3 = nlohmann::json::parse(readText(sourcePath("workloads/keras/tutorial_mlp_functional_keras3.json")));
  nlohmann::json& layers = k3["config"]["layers"];
  nlohmann::json dropout = layers[2];  // the first Dense's call, turned into a Dropout reading it
  dropout["class_name"] = "Dropout";
  dropout["name"] = "drop";
  dropout["config"] = {{"name", "drop"}, {"trainable", true}, {"dtype", layers[2]["config"]["dtype"]},
                       {"rate", 0.5},   {"seed", nullptr},   {"noise_shape", nullptr}};
  dropout["inbound_nodes"][0]["args"][0]["config"]["keras_history"] = {"dense", 0, 0};
  dropout["inbound_nodes"][0]["args"][0]["config"]["shape"] = {nullptr, 128};
  layers[3]["inbound_nodes"][0]["args"][0]["config"]["keras_history"] = {"drop", 0, 0};
  layers.insert(layers.begin() + 3, dropout);
  auto write = [&](const std::string& name, const nlohmann::json& j) {
    const fs::path file = dir.path() / name;
    std::ofstream(file) << j.dump();
    return file.string();
  };
  const std::string run = " --synthetic-data --steps 2 --steps-per-execution 1";
  layers[3]["inbound_nodes"][0]["kwargs"] = {{"training", nullptr}};
  const std::string plain = write("null.json", k3);
  const auto r = runCommand(ipusimBinary() + " run --keras " + quote(plain) + run);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  layers[3]["inbound_nodes"][0]["kwargs"] = {{"training", false}};
  const std::string fixed = write("false.json", k3);
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(fixed) + run),
                fixed + ": layer 'drop' (Dropout): inbound_nodes: kwargs.training: false: a call that fixes the "
                        "training mode is not modelled");
  expectRefusal(runCommand(ipusimBinary() + " predict --keras " + quote(fixed) + run), "kwargs.training: false");
  // TF 2.x: the keyword arguments are each inbound entry's fourth item.
  nlohmann::json tf2 = nlohmann::json::parse(readText(sourcePath("tests/data/keras/residual_convnet_tf2.json")));
  tf2["config"]["layers"][2]["inbound_nodes"][0][0][3] = {{"training", true}};
  const std::string monteCarlo = write("tf2.json", tf2);
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(monteCarlo) + run + " --input-shape 8,8,1"),
                monteCarlo + ": layer 'batch_normalization' (BatchNormalization): inbound_nodes: kwargs.training: true");
}

// A name that refers to a layer (a recomputation checkpoint, a layer's
// input) of megabytes was searched for the nearest layer name by edit
// distance (2 s for 5 MB) and then echoed whole: a one-line error of 5 MB.
// No layer's name is longer than kMaxNameBytes: the reference is refused
// at once, quoted by its first 40 bytes as a layer's own name is.
TEST(AdversarialPass10, AnOverlongLayerReferenceIsQuotedShort) {
  ScratchDir dir("overlong-reference");
  const std::string huge(2'000'000, 'a');
  auto check = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit, const std::string& key) {
    nlohmann::json w = nlohmann::json::parse(R"({
      "name": "overlong",
      "dataset": {"format": "synthetic", "batch_size": 4, "features": 16, "classes": 4, "examples": 16},
      "model": {"layers": [{"type": "dense", "units": 8, "name": "d1"}, {"type": "dense", "units": 8, "name": "d2"},
                           {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}]},
      "optimizer": {"type": "sgd"}, "training": {"steps": 2, "steps_per_execution": 1},
      "ipu": {"arch": "ipu2", "tiles": 16}})");
    edit(w);
    const fs::path file = dir.path() / (name + ".json");
    std::ofstream(file) << w.dump();
    const auto r = runCommand(ipusimBinary() + " run " + quote(file.string()));
    expectRefusal(r, file.string() + ": " + key + ": '" + huge.substr(0, 40) +
                         "...' is 2000000 bytes long: it names no layer (a layer's name is at most 1024 bytes");
    EXPECT_LT(r.output.size(), 1000u) << name;
  };
  check("checkpoint", [&](nlohmann::json& w) { w["training"]["recompute_checkpoints"] = {"d1", huge}; },
        "training.recompute_checkpoints[1]");
  check("input", [&](nlohmann::json& w) { w["model"]["layers"][1]["inputs"] = {huge}; }, "model.layers[1].inputs");
}

// A pipeline's predict or evaluate with executions of no whole group of
// mini-batches was refused because "the weights are updated within one
// execution": they are not updated at all there; the reason is the groups.
TEST(AdversarialPass10, APipelinedPredictsGroupRuleGivesItsOwnReason) {
  ScratchDir dir("pipeline-predict-groups");
  const std::string pipelined = quote(sourcePath("workloads/mnist_pipelined_2ipus.json"));
  for (const char* command : {" predict ", " evaluate "}) {
    const auto r = runCommand(ipusimBinary() + command + pipelined + " --synthetic-data --steps 3 --steps-per-execution 3");
    expectRefusal(r, "pipeline.gradient_accumulation_count: 8 must divide training.steps_per_execution (3): an "
                     "execution runs whole groups of that many mini-batches through the stages, as fit's do");
    EXPECT_EQ(r.output.find("weights are updated"), std::string::npos) << r.output;
  }
  const fs::path file = dir.path() / "predict.json";
  nlohmann::json w = nlohmann::json::parse(readText(sourcePath("workloads/mnist_pipelined_2ipus.json")));
  w["task"] = "predict";
  w["training"]["steps_per_execution"] = 3;
  w["training"]["steps"] = 3;
  std::ofstream(file) << w.dump();
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(file.string()) + " --synthetic-data"),
                "must divide training.steps_per_execution (3): an execution runs whole groups");
  // fit keeps its reason.
  expectRefusal(runCommand(ipusimBinary() + " run " + pipelined + " --synthetic-data --steps 3 --steps-per-execution 3"),
                "must divide training.steps_per_execution (3): the weights are updated within one execution");
}

// The out-of-memory summary offered training.recompute_checkpoints "auto"
// to a model in which "auto" finds no layer to cut at (a flatten and one
// dense layer), and following it ended in "the model has no layer to
// checkpoint". "auto" is offered only where it finds checkpoints.
TEST(AdversarialPass10, OutOfMemoryOffersAutoRecomputationOnlyWhereItFindsCheckpoints) {
  ScratchDir dir("oom-auto-remedy");
  const fs::path file = dir.path() / "one_layer.json";
  std::ofstream(file) << R"({
    "name": "one_layer",
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8, 8, 1], "classes": 10, "examples": 16},
    "model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 10, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"}, "training": {"steps": 2, "steps_per_execution": 1},
    "ipu": {"arch": "ipu2", "tiles": 32}})";
  const auto r = runCommand(ipusimBinary() + " compile " + quote(file.string()) + " --set tile.memoryBytes=600");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("Out of memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"auto\" finds no layer to cut this model at"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("or \"auto\")"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_10
