// Replicated tensor sharding (training.replicated_optimizer_state_sharding;
// issue "Big models"; scheduler/multi_ipu/replication.hpp): the numbers are
// unchanged — the losses and every replica's final weights are bit for bit
// those of the same replicas all-reducing their gradients — while each
// replica keeps 1/R of the optimizer state, the links carry as many bytes
// (the all-gather moves the updated weights instead of the mean gradients)
// and each replica runs 1/R of the updates.
#include "training_dump.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace ipusim::test::test_sharding_results {
namespace {

nlohmann::json mlp(const nlohmann::json& optimizer, std::uint32_t replicas, bool sharded) {
  nlohmann::json w = nlohmann::json::parse(R"({
    "name": "sharded_mlp",
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 3, "input_shape": [16], "classes": 10,
                "examples": 128},
    "model": {"layers": [{"type": "dense", "units": 32, "activation": "relu"},
                         {"type": "dense", "units": 10, "activation": "softmax"}]},
    "training": {"steps": 8, "steps_per_execution": 4},
    "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 5})");
  w["optimizer"] = optimizer;
  w["ipu"]["num_ipus"] = replicas;
  w["training"]["replicated_optimizer_state_sharding"] = sharded;
  return w;
}

nlohmann::json runJson(const ScratchDir& dir, const std::string& name, const nlohmann::json& workload) {
  const auto run = runCommand(ipusimBinary() + " run " + quote(writeWorkload(dir, name, workload)) + " --json");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  return nlohmann::json::parse(run.output.substr(run.output.find('{')));
}

TEST(ShardingResults, LossesAndEveryReplicasWeightsAreBitIdentical) {
  ScratchDir dir("sharding");
  const std::pair<nlohmann::json, std::uint32_t> cases[] = {
      {nlohmann::json::parse(R"({"type": "adam", "learning_rate": 0.01})"), 2},
      // Three slots, and weights whose tile intervals are shorter than 4
      // elements in places (empty pieces of a chunk).
      {nlohmann::json::parse(R"({"type": "rmsprop", "learning_rate": 0.01, "centered": true, "momentum": 0.5})"), 4}};
  for (const auto& [optimizer, replicas] : cases) {
    const std::string name = optimizer["type"];
    const nlohmann::json reduced = trainingDump(dir, name, mlp(optimizer, replicas, false));
    const nlohmann::json sharded = trainingDump(dir, name + "_sharded", mlp(optimizer, replicas, true));
    for (const char* key : {"losses", "final_weights"}) {
      ASSERT_TRUE(reduced.contains(key)) << key;
      EXPECT_EQ(sharded.at(key), reduced.at(key)) << name << ": " << key << " differ";
    }
    EXPECT_EQ(sharded.at("losses").size(), 8u);
    // Each tensor holds every replica's copy; after the all-gather they agree.
    for (const auto& tensor : sharded.at("final_weights")) {
      const std::size_t n = tensor.size() / replicas;
      for (std::uint32_t r = 1; r < replicas; ++r)
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(tensor[r * n + i], tensor[i]) << name << ": replica " << r << " element " << i;
    }
  }
}

TEST(ShardingResults, TheStateFallsTheLinksCarryAsManyBytesAndTheUpdatesShrink) {
  ScratchDir dir("sharding");
  const nlohmann::json adam = nlohmann::json::parse(R"({"type": "adam", "learning_rate": 0.01})");
  const nlohmann::json reduced = runJson(dir, "reduced", mlp(adam, 4, false));
  const nlohmann::json sharded = runJson(dir, "sharded", mlp(adam, 4, true));
  const auto& a = reduced.at("step_cycles");
  const auto& b = sharded.at("step_cycles");
  // The all-gather moves float32 weights where the all-reduce moved float32 gradients.
  EXPECT_EQ(b.at("collective"), a.at("collective"));
  EXPECT_GT(a.at("collective").get<double>(), 0.0);
  EXPECT_LT(b.at("compute").get<double>(), a.at("compute").get<double>());
  EXPECT_LT(sharded.at("max_tile_bytes").get<double>(), reduced.at("max_tile_bytes").get<double>());
  EXPECT_EQ(sharded.at("final_loss"), reduced.at("final_loss"));
}

TEST(ShardingResults, RefusedByNameWithOneReplicaPlainSgdOrOffloading) {
  ScratchDir dir("sharding");
  const nlohmann::json adam = nlohmann::json::parse(R"({"type": "adam"})");
  auto compileFails = [&](const std::string& name, const nlohmann::json& w, const std::vector<std::string>& fragments) {
    const auto r = runCommand(ipusimBinary() + " compile " + quote(writeWorkload(dir, name, w)));
    EXPECT_NE(r.exitCode, 0) << name;
    for (const std::string& f : fragments) EXPECT_NE(r.output.find(f), std::string::npos) << name << ": " << r.output;
  };
  compileFails("one", mlp(adam, 1, true),
               {"one.json: training.replicated_optimizer_state_sharding", "gives one replica"});
  compileFails("sgd", mlp(nlohmann::json::parse(R"({"type": "sgd"})"), 2, true),
               {"training.replicated_optimizer_state_sharding", "plain SGD", "no state to shard"});
  nlohmann::json offloaded = mlp(adam, 2, false);
  offloaded["training"]["offload_optimizer_state"] = true;
  compileFails("offloaded", offloaded, {"training.offload_optimizer_state", "not modelled with replicas"});
}

TEST(ShardingResults, TheOutOfMemorySummaryNamesSharding) {
  ScratchDir dir("sharding");
  const auto oom = runCommand(ipusimBinary() + " compile " +
                              quote(writeWorkload(dir, "adam", mlp(nlohmann::json::parse(R"({"type": "adam"})"), 4, false))) +
                              " --set tile.memoryBytes=2000");
  EXPECT_NE(oom.exitCode, 0);
  EXPECT_NE(oom.output.find("shard the optimizer state over the 4 replicas "
                            "(training.replicated_optimizer_state_sharding: true; about "),
            std::string::npos)
      << oom.output;
}

}  // namespace
}  // namespace ipusim::test::test_sharding_results
