// Recomputation in a pipeline leaves the numbers unchanged (issue "Big
// models", criterion 1): a residual network with batch normalization,
// pipelined over two IPUs, trained keeping every activation and trained with
// each pipeline.recomputation_mode (and a checkpoint), gives bit for bit the
// same losses, final weights and moving statistics, while the recomputing
// runs' steps run the recomputed ops and their run summaries say so. Each
// run is its own process (ipusim-torch-dump: one simulation per process).
#include "training_dump.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ipusim::test::test_pipeline_recomputation_results {
namespace {

// A residual block and a batch normalization on stage 0 (its statistics
// update the moving averages in place: kept, not recomputed), the head on
// stage 1.
nlohmann::json pipelinedResidualNet(const std::string& schedule) {
  nlohmann::json w = nlohmann::json::parse(R"({
    "name": "pipelined_residual",
    "dataset": {"format": "synthetic", "batch_size": 4, "shuffle_seed": 3, "input_shape": [16], "classes": 10,
                "examples": 64},
    "model": {"layers": [
      {"type": "dense", "units": 32, "name": "d1", "stage": 0},
      {"type": "batch_normalization", "name": "bn1", "stage": 0},
      {"type": "activation", "activation": "relu", "name": "r1", "stage": 0},
      {"type": "dense", "units": 32, "activation": "relu", "name": "d2", "stage": 0},
      {"type": "add", "inputs": ["r1", "d2"], "name": "add1", "stage": 0},
      {"type": "dense", "units": 32, "activation": "tanh", "name": "d3", "stage": 1},
      {"type": "dense", "units": 10, "activation": "softmax", "name": "d4", "stage": 1}]},
    "optimizer": {"type": "sgd", "learning_rate": 0.05},
    "training": {"steps": 8, "steps_per_execution": 8},
    "ipu": {"arch": "ipu2", "tiles": 16, "num_ipus": 2}, "seed": 5})");
  w["pipeline"] = {{"schedule", schedule}, {"gradient_accumulation_count", 4}};
  return w;
}

void expectSameNumbers(const nlohmann::json& a, const nlohmann::json& b, const std::string& label) {
  for (const char* key : {"losses", "final_weights", "moving_statistics"}) {
    ASSERT_TRUE(a.contains(key)) << key;
    EXPECT_EQ(b.at(key), a.at(key)) << label << ": " << key << " differ";
  }
  EXPECT_EQ(a.at("losses").size(), 8u);
}

nlohmann::json compiled(const ScratchDir& dir, const std::string& name, const nlohmann::json& workload) {
  const auto c = runCommand(ipusimBinary() + " compile " + quote(writeWorkload(dir, name, workload)) + " --json");
  EXPECT_EQ(c.exitCode, 0) << c.output;
  return nlohmann::json::parse(c.output.substr(c.output.find('{')));
}

TEST(PipelineRecomputationResults, LossesWeightsAndMovingStatisticsAreBitIdentical) {
  ScratchDir dir("pipeline-recomputation");
  for (const char* schedule : {"grouped", "sequential"}) {
    const nlohmann::json plain = pipelinedResidualNet(schedule);
    nlohmann::json automatic = plain, checkpointed = plain;
    automatic["pipeline"]["recomputation_mode"] = "Auto";
    checkpointed["pipeline"]["recomputation_mode"] = "RecomputeAndBackpropagateInterleaved";
    checkpointed["training"]["recompute_checkpoints"] = {"r1"};
    const std::string s = schedule;
    const nlohmann::json keeping = trainingDump(dir, s + "_plain", plain);
    expectSameNumbers(keeping, trainingDump(dir, s + "_auto", automatic), s + ", Auto");
    expectSameNumbers(keeping, trainingDump(dir, s + "_checkpointed", checkpointed), s + ", a checkpoint");
    // The recomputing step runs more, and says how it recomputes.
    const nlohmann::json a = compiled(dir, s + "_plain", plain), b = compiled(dir, s + "_auto", automatic);
    EXPECT_GT(b.at("vertices").get<double>(), a.at("vertices").get<double>()) << s;
    EXPECT_GT(b.at("estimated_step_cycles").get<double>(), a.at("estimated_step_cycles").get<double>()) << s;
    EXPECT_EQ(a.at("recomputation_mode"), nullptr);
    EXPECT_EQ(b.at("recomputation_mode"), s == "grouped" ? "RecomputeThenBackpropagate"
                                                         : "RecomputeAndBackpropagateInterleaved");
  }
}

TEST(PipelineRecomputationResults, TheRunSummarySaysWhatIsRecomputed) {
  ScratchDir dir("pipeline-recomputation-summary");
  nlohmann::json checkpointed = pipelinedResidualNet("grouped");
  checkpointed["pipeline"]["recomputation_mode"] = "RecomputeAndBackpropagateInterleaved";
  checkpointed["training"]["recompute_checkpoints"] = {"r1"};
  const std::string file = writeWorkload(dir, "checkpointed", checkpointed);
  const auto text = runCommand(ipusimBinary() + " run " + quote(file) + " --synthetic-data");
  ASSERT_EQ(text.exitCode, 0) << text.output;
  EXPECT_NE(text.output.find(", recomputing each stage's forward pass from 1 checkpoint (pipeline.recomputation_mode "
                             "RecomputeAndBackpropagateInterleaved)"),
            std::string::npos)
      << text.output;
  const auto json = runCommand(ipusimBinary() + " run " + quote(file) + " --synthetic-data --json");
  ASSERT_EQ(json.exitCode, 0) << json.output;
  const auto summary = nlohmann::json::parse(json.output.substr(json.output.find('{')));
  EXPECT_EQ(summary.at("recomputation_mode"), "RecomputeAndBackpropagateInterleaved");
  EXPECT_EQ(summary.at("recompute_checkpoints"), nlohmann::json{"r1"});
}

}  // namespace
}  // namespace ipusim::test::test_pipeline_recomputation_results
