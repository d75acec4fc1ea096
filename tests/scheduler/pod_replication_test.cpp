// Replicas in several IPU-PODs joined by GW-Links (ipu.ipus_per_pod,
// ipu.system; scheduler/multi_ipu/hierarchical_all_reduce.hpp): R replicas
// of batch b in PODs train as one IPU with batch R x b, the all-reduce staged
// in and across the PODs; the workload keys' checks.
#include "replica_expectations.hpp"
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace ipusim::testing::pod_replication_test {
namespace {

scheduler::Workload inPods(std::uint32_t replicas, std::uint32_t ipusPerPod) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/small_synthetic.json"));
  w.ipu.numIpus = replicas;
  w.ipu.ipusPerPod = ipusPerPod;
  return w;
}

// The step's all_reduce program.
const ir::Program& allReduce(const scheduler::CompiledWorkload& c) {
  for (const ir::Program& p : c.exe.programs)
    if (p.name == "all_reduce") return p;
  throw std::logic_error("no all_reduce program");
}

TEST(PodReplication, EightReplicasInTwoPodsTrainAsOneIpuWithBatch64) {
  const TrainingLosses r = runTraining(inPods(8, 4), 20);
  EXPECT_EQ(r.compiled.target.numPods(), 2u);
  expectReplicasMatchOneIpu(r, 8, 20);
}

// A fused rule: the mean taken by the owners of the GW-Link stage's sub-chunks.
TEST(PodReplication, AdamInTwoPodsTrainsAsOneIpuWithItsGlobalBatch) {
  auto w = inPods(8, 4);
  w.optimizer.type = "adam";
  w.optimizer.learningRate = 0.01;
  expectReplicasMatchOneIpu(runTraining(w, 20), 8, 20);
}

// 2 PODs of 4: 3 steps in the PODs (sync, exchange, add), 1 across them
// (sync, exchange, add), then 1 across (sync, exchange) and 3 in the PODs.
TEST(PodReplication, TheAllReduceCrossesTheGwLinksBetweenItsStagesInThePods) {
  const scheduler::CompiledWorkload c = scheduler::compile(inPods(8, 4));
  const ir::Program& all = allReduce(c);
  std::vector<std::string> copies;
  for (ir::Id child : all.children)
    if (c.exe.programs[child].kind == ir::ProgramKind::Copy) copies.push_back(c.exe.programs[child].name);
  EXPECT_EQ(copies, (std::vector<std::string>{"all_reduce/pod_reduce_scatter/0", "all_reduce/pod_reduce_scatter/1",
                                              "all_reduce/pod_reduce_scatter/2", "all_reduce/gw_reduce_scatter/0",
                                              "all_reduce/gw_all_gather/0", "all_reduce/pod_all_gather/0",
                                              "all_reduce/pod_all_gather/1", "all_reduce/pod_all_gather/2"}));
  EXPECT_EQ(all.children.size(), 3u * 3 + 3 + 2 + 3 * 2);
  // One POD (the default): the flat ring, as before.
  EXPECT_EQ(allReduce(scheduler::compile(inPods(8, 0))).children.size(), 7u * 3 + 7 * 2);
}

TEST(PodReplication, ShardingOverPodsIsRefusedNamingTheKeys) {
  auto w = inPods(8, 4);
  w.optimizer.type = "adam";
  w.training.replicatedOptimizerStateSharding = true;
  try {
    scheduler::compile(w);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("replicated_optimizer_state_sharding over 2 PODs"), std::string::npos)
        << e.what();
  }
}

nlohmann::json smallSynthetic() {
  std::ifstream in(sourcePath("workloads/small_synthetic.json"));
  return nlohmann::json::parse(in);
}

TEST(PodReplication, SystemAndPodKeysAreCheckedByName) {
  nlohmann::json j = smallSynthetic();
  j["dataset"]["examples"] = 256 * 8;  // a global batch of 256 replicas
  j["ipu"]["system"] = "pod256";
  const scheduler::Workload w = scheduler::parseWorkload(j, "w.json");
  EXPECT_EQ(w.ipu.numIpus, 256u);
  const model::Target t = scheduler::targetFor(w);
  EXPECT_EQ(t.numPods(), 4u);
  EXPECT_EQ(t.ipuLink.railsWrap, 1u);
  j["ipu"]["num_ipus"] = 64;
  const std::string differs = workloadRefusal(j);
  EXPECT_NE(differs.find("ipu.num_ipus: 64 differs from the 256 IPUs of ipu.system \"pod256\""), std::string::npos)
      << differs;
  j["ipu"]["system"] = "pod512";
  EXPECT_NE(workloadRefusal(j).find("ipu.system"), std::string::npos) << workloadRefusal(j);
  j["ipu"].erase("system");
  j["ipu"]["num_ipus"] = 8;
  j["ipu"]["ipus_per_pod"] = 3;
  const std::string perPod = workloadRefusal(j);
  EXPECT_NE(perPod.find("ipu.ipus_per_pod: 3 does not divide ipu.num_ipus 8"), std::string::npos) << perPod;
}

// PODs of 2 IPUs on IPU-M2000s of 4: the target names the parameters.
TEST(PodReplication, PodsOfPartMachinesAreAnErrorNamingTheParameters) {
  try {
    scheduler::targetFor(inPods(8, 2));
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gwLink.ipusPerGateway = 4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::testing::pod_replication_test
