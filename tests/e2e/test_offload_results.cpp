// Optimizer state in Streaming Memory (training.offload_optimizer_state;
// issue "Big models"): the numbers are unchanged — the losses and final
// weights of an Adam and an Adagrad run are bit for bit those of the same
// runs keeping their state on the tiles — while the fullest tile falls and
// each step grows by exactly the copies the model times: per slot variable a
// load before its update and a store after it, each
// streamingMemory.latencySeconds + bytes / streamingMemory.bytesPerSecond
// (model/hardware/streaming_memory.hpp) and an external sync.
#include "training_dump.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace ipusim::test::test_offload_results {
namespace {

nlohmann::json mlp(const nlohmann::json& optimizer) {
  nlohmann::json w = nlohmann::json::parse(R"({
    "name": "offloaded_mlp",
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 3, "input_shape": [16], "classes": 10,
                "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 32, "activation": "relu"},
                         {"type": "dense", "units": 10, "activation": "softmax"}]},
    "training": {"steps": 8, "steps_per_execution": 4},
    "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 5})");
  w["optimizer"] = optimizer;
  return w;
}

nlohmann::json offloaded(nlohmann::json w) {
  w["training"]["offload_optimizer_state"] = true;
  return w;
}

// `ipusim run --json`, its profile in the directory `name`.
nlohmann::json runJson(const ScratchDir& dir, const std::string& name, const nlohmann::json& workload) {
  const std::string options = R"({"autoReport.all": "true", "autoReport.directory": ")" + (dir.path() / name).string() + "\"}";
  const auto run = runCommand(ipusimBinary() + " run " + quote(writeWorkload(dir, name, workload)) + " --json --engine-options " +
                              quote(options));
  EXPECT_EQ(run.exitCode, 0) << run.output;
  return nlohmann::json::parse(run.output.substr(run.output.find('{')));
}

TEST(OffloadResults, LossesAndWeightsAreBitIdentical) {
  ScratchDir dir("offload");
  const nlohmann::json optimizers[] = {
      nlohmann::json::parse(R"({"type": "adam", "learning_rate": 0.01})"),
      // Adagrad's accumulator starts at 0.1: the remote buffer holds the initial value.
      nlohmann::json::parse(R"({"type": "adagrad", "learning_rate": 0.05, "initial_accumulator_value": 0.1})")};
  for (const nlohmann::json& optimizer : optimizers) {
    const std::string name = optimizer["type"];
    const nlohmann::json onTiles = trainingDump(dir, name, mlp(optimizer));
    const nlohmann::json remote = trainingDump(dir, name + "_offloaded", offloaded(mlp(optimizer)));
    for (const char* key : {"losses", "final_weights"}) {
      ASSERT_TRUE(onTiles.contains(key)) << key;
      EXPECT_EQ(remote.at(key), onTiles.at(key)) << name << ": " << key << " differ";
    }
    EXPECT_EQ(onTiles.at("losses").size(), 8u);
  }
  // With gradient accumulation (as TF's GradientAccumulationOptimizerV2,
  // which "supports optimizer state offloading"): the slot is loaded and
  // stored once per update of 2 mini-batches.
  nlohmann::json accumulated = mlp(nlohmann::json::parse(R"({"type": "sgd", "learning_rate": 0.01, "momentum": 0.9})"));
  accumulated["training"]["gradient_accumulation_count"] = 2;
  const nlohmann::json onTiles = trainingDump(dir, "accumulated", accumulated);
  const nlohmann::json remote = trainingDump(dir, "accumulated_offloaded", offloaded(accumulated));
  for (const char* key : {"losses", "final_weights"}) EXPECT_EQ(remote.at(key), onTiles.at(key)) << "accumulated: " << key;
}

// One copy of `bytes` as the model times it on the ipu2 preset (1.33 GHz;
// Streaming Memory at 14.4 GB/s after 1 us; an external sync of 600 cycles).
std::uint64_t copyCycles(std::uint64_t bytes) {
  const double exact = double(bytes) / (14.4e9 / 1.33e9);
  return 1330 + std::uint64_t(std::ceil(exact)) + 600;
}

TEST(OffloadResults, TheStepGrowsByExactlyItsCopiesAndTheFullestTileFalls) {
  ScratchDir dir("offload");
  const nlohmann::json adam = nlohmann::json::parse(R"({"type": "adam", "learning_rate": 0.01})");
  const nlohmann::json onTiles = runJson(dir, "tiles", mlp(adam));
  const nlohmann::json remote = runJson(dir, "remote", offloaded(mlp(adam)));
  // Adam's m and v of each weight (kernel 16 x 32, bias 32, kernel 32 x 10,
  // bias 10, in float32), each loaded and stored once per step.
  std::uint64_t expected = 0;
  for (std::uint64_t elements : {16 * 32, 32, 32 * 10, 10}) expected += 2 * 2 * copyCycles(4 * elements);
  EXPECT_EQ(remote.at("step_cycles").at("streaming_memory").get<double>(), double(expected));
  EXPECT_EQ(onTiles.at("step_cycles").at("streaming_memory").get<double>(), 0.0);
  EXPECT_EQ(remote.at("step_cycles").at("total").get<double>() - onTiles.at("step_cycles").at("total").get<double>(),
            double(expected));
  EXPECT_EQ(remote.at("estimated_step_cycles").get<double>() - onTiles.at("estimated_step_cycles").get<double>(),
            double(expected));
  EXPECT_LT(remote.at("max_tile_bytes").get<double>(), onTiles.at("max_tile_bytes").get<double>());
  EXPECT_EQ(remote.at("final_loss"), onTiles.at("final_loss"));
  EXPECT_EQ(remote.at("streaming_memory_bytes").get<double>(), 2.0 * 4 * (16 * 32 + 32 + 32 * 10 + 10));
  // The profile gives the copies to the updates that run them: report --ops counts them there.
  const auto ops = runCommand(ipusimBinary() + " report " + quote((dir.path() / "remote" / "profile.pop").string()) +
                              " --ops --json");
  ASSERT_EQ(ops.exitCode, 0) << ops.output;
  const nlohmann::json table = nlohmann::json::parse(ops.output);
  double perStep = 0;
  for (const auto& row : table.at("operations")) {
    const double remoteCycles = row.at("streaming_memory_cycles").get<double>();
    if (remoteCycles > 0) {
      EXPECT_EQ(row.at("pass"), "update") << row.dump();
    }
    perStep += remoteCycles / 8;  // 8 steps captured
  }
  EXPECT_EQ(perStep, double(expected));
  // And insights says what they cost, and the knob.
  const auto insights = runCommand(ipusimBinary() + " insights " + quote((dir.path() / "remote" / "profile.pop").string()));
  ASSERT_EQ(insights.exitCode, 0) << insights.output;
  EXPECT_NE(insights.output.find("copies to and from Streaming Memory take"), std::string::npos) << insights.output;
  EXPECT_NE(insights.output.find("(32180 cycles a step, by 4 ops; the largest dense/kernel_update)"), std::string::npos)
      << insights.output;
  EXPECT_NE(insights.output.find("training.offload_optimizer_state: false"), std::string::npos) << insights.output;
}

TEST(OffloadResults, RefusedByNameWithoutStateToOffloadOrStreamingMemory) {
  ScratchDir dir("offload");
  const auto sgd = runCommand(ipusimBinary() + " compile " +
                              quote(writeWorkload(dir, "sgd", offloaded(mlp(nlohmann::json::parse(R"({"type": "sgd"})"))))));
  EXPECT_NE(sgd.exitCode, 0);
  EXPECT_NE(sgd.output.find("training.offload_optimizer_state: the optimizer"), std::string::npos) << sgd.output;
  EXPECT_NE(sgd.output.find("keeps no state to offload"), std::string::npos) << sgd.output;
  nlohmann::json mk1 = offloaded(mlp(nlohmann::json::parse(R"({"type": "adam"})")));
  mk1["ipu"]["arch"] = "ipu1";
  const auto c2 = runCommand(ipusimBinary() + " compile " + quote(writeWorkload(dir, "mk1", mk1)));
  EXPECT_NE(c2.exitCode, 0);
  EXPECT_NE(c2.output.find("ipu1 (a C2 card) has no Streaming Memory"), std::string::npos) << c2.output;
}

// Out of memory, the summary names offloading with what it saves and costs.
TEST(OffloadResults, TheOutOfMemorySummaryNamesOffloadingAndItsCost) {
  ScratchDir dir("offload");
  const auto oom = runCommand(ipusimBinary() + " compile " +
                              quote(writeWorkload(dir, "adam", mlp(nlohmann::json::parse(R"({"type": "adam"})")))) +
                              " --set tile.memoryBytes=2000");
  EXPECT_NE(oom.exitCode, 0);
  std::uint64_t expected = 0;
  for (std::uint64_t elements : {16 * 32, 32, 32 * 10, 10}) expected += 2 * 2 * copyCycles(4 * elements);
  EXPECT_NE(oom.output.find("training.offload_optimizer_state: true; about "), std::string::npos) << oom.output;
  EXPECT_NE(oom.output.find("about " + std::to_string(expected) + " more cycles per step"), std::string::npos)
      << oom.output;
}

}  // namespace
}  // namespace ipusim::test::test_offload_results
