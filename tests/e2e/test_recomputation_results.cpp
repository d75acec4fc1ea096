// Recomputation leaves the numbers unchanged (issue "Big models",
// criterion 1): a residual convnet with batch normalization and dropout
// trained with training.recompute_checkpoints gives bit for bit the losses,
// the final weights and the moving statistics of the same run without
// them, while its step runs the recomputed ops (more vertices, more
// estimated cycles). Each run is its own process (ipusim-torch-dump: one
// simulation per process), its results written as JSON with every float
// exactly.
#include "training_dump.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace ipusim::test::test_recomputation_results {
namespace {

nlohmann::json residualConvnet() {
  return nlohmann::json::parse(R"({
    "name": "recomputed_convnet",
    "dataset": {"format": "synthetic", "batch_size": 4, "shuffle_seed": 3, "input_shape": [8, 8, 1], "classes": 10,
                "examples": 32},
    "model": {"layers": [
      {"type": "conv2d", "filters": 8, "kernel_size": [3, 3], "padding": "same", "name": "c1"},
      {"type": "batch_normalization", "name": "bn1"},
      {"type": "activation", "activation": "relu", "name": "r1"},
      {"type": "conv2d", "filters": 8, "kernel_size": [3, 3], "padding": "same", "activation": "relu", "name": "c2"},
      {"type": "dropout", "rate": 0.25, "name": "d1"},
      {"type": "add", "inputs": ["r1", "d1"], "name": "add1"},
      {"type": "conv2d", "filters": 8, "kernel_size": [3, 3], "padding": "same", "name": "c3"},
      {"type": "batch_normalization", "name": "bn2"},
      {"type": "add", "inputs": ["add1", "bn2"], "name": "add2"},
      {"type": "flatten"},
      {"type": "dense", "units": 16, "activation": "relu"},
      {"type": "dropout", "rate": 0.5},
      {"type": "dense", "units": 10, "activation": "softmax"}]},
    "optimizer": {"type": "sgd", "learning_rate": 0.05, "momentum": 0.9},
    "training": {"steps": 8, "steps_per_execution": 4},
    "ipu": {"arch": "ipu2", "tiles": 32}, "seed": 5})");
}

struct Trained {
  nlohmann::json results;
  std::string compiled;  // `ipusim compile --json`
};

Trained train(const ScratchDir& dir, const std::string& name, const nlohmann::json& workload) {
  nlohmann::json results = trainingDump(dir, name, workload);
  const auto compiled = runCommand(ipusimBinary() + " compile " + quote(writeWorkload(dir, name, workload)) + " --json");
  EXPECT_EQ(compiled.exitCode, 0) << compiled.output;
  return {std::move(results), compiled.output.substr(compiled.output.find('{'))};
}

TEST(RecomputationResults, LossesWeightsAndMovingStatisticsAreBitIdentical) {
  ScratchDir dir("recomputation");
  const nlohmann::json model = residualConvnet();
  nlohmann::json checkpointed = model;
  checkpointed["training"]["recompute_checkpoints"] = {"r1", "add1", "add2"};
  const Trained plain = train(dir, "plain", model);
  const Trained recomputed = train(dir, "recomputed", checkpointed);
  for (const char* key : {"losses", "final_weights", "moving_statistics"}) {
    ASSERT_TRUE(plain.results.contains(key)) << key;
    EXPECT_EQ(recomputed.results.at(key), plain.results.at(key)) << key << " differ";
  }
  EXPECT_EQ(plain.results.at("losses").size(), 8u);
  // The recomputed run did run more: its step has the clones' vertices and cycles.
  const auto a = nlohmann::json::parse(plain.compiled), b = nlohmann::json::parse(recomputed.compiled);
  EXPECT_GT(b.at("vertices").get<double>(), a.at("vertices").get<double>());
  EXPECT_GT(b.at("estimated_step_cycles").get<double>(), a.at("estimated_step_cycles").get<double>());
  EXPECT_EQ(b.at("recompute_checkpoints"), checkpointed["training"]["recompute_checkpoints"]);
  EXPECT_EQ(a.at("recompute_checkpoints"), nlohmann::json::array());
}

// The run's summary says the step recomputes, and from which checkpoints
// ("auto": the ones chosen).
TEST(RecomputationResults, TheRunSummaryNamesTheCheckpoints) {
  ScratchDir dir("recomputation-summary");
  nlohmann::json automatic = residualConvnet();
  automatic["training"]["recompute_checkpoints"] = "auto";
  const std::string file = (dir.path() / "auto.json").string();
  std::ofstream(file) << automatic.dump();
  const auto text = runCommand(ipusimBinary() + " run " + quote(file) + " --steps 4 --steps-per-execution 4");
  ASSERT_EQ(text.exitCode, 0) << text.output;
  EXPECT_NE(text.output.find(", recomputing from 2 checkpoints (training.recompute_checkpoints)"), std::string::npos)
      << text.output;
  const auto json = runCommand(ipusimBinary() + " run " + quote(file) + " --steps 4 --steps-per-execution 4 --json");
  ASSERT_EQ(json.exitCode, 0) << json.output;
  EXPECT_EQ(nlohmann::json::parse(json.output.substr(json.output.find('{'))).at("recompute_checkpoints"),
            (nlohmann::json{"r1", "flatten"}));
}

// Mixed precision: the recomputed casts of the weights to half run before
// the weights' updates, as the casts they copy do (bench/torch's residual
// convnet, a Keras 3 file: its losses differed from the second step on
// when a recomputed cast could read an updated weight).
TEST(RecomputationResults, BitIdenticalInMixedPrecision) {
  ScratchDir dir("recomputation-mixed");
  nlohmann::json model = nlohmann::json::parse(R"({
    "name": "residual_convnet",
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 7, "input_shape": [8, 8, 1], "classes": 10,
                "examples": 64},
    "model": {"dtype": "mixed_float16"},
    "optimizer": {"type": "sgd", "learning_rate": 0.05, "momentum": 0.9},
    "training": {"steps": 8, "steps_per_execution": 4}, "ipu": {"tiles": 64}, "seed": 3})");
  model["model"]["keras"] = sourcePath("tests/data/keras/residual_convnet_keras3.json");
  nlohmann::json checkpointed = model;
  checkpointed["training"]["recompute_checkpoints"] = {"activation", "add"};
  const Trained plain = train(dir, "plain", model);
  const Trained recomputed = train(dir, "recomputed", checkpointed);
  EXPECT_EQ(plain.results.at("losses").size(), 8u);
  for (const char* key : {"losses", "final_weights", "moving_statistics"})
    EXPECT_EQ(recomputed.results.at(key), plain.results.at(key)) << key << " differ";
}

}  // namespace
}  // namespace ipusim::test::test_recomputation_results
