// Replication (scheduler/multi_ipu/replication.hpp): R replicas x batch b train as one
// IPU with batch R x b over the same examples; the compiled layout.
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ipusim::testing {
namespace {

scheduler::Workload replicated(std::uint32_t replicas) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/small_synthetic.json"));
  w.ipu.numIpus = replicas;
  return w;
}

void expectReplicasMatchOneIpu(const TrainingLosses& r, std::uint32_t replicas, std::uint64_t steps) {
  ASSERT_EQ(r.simulated.size(), steps);
  for (std::size_t s = 0; s < steps; ++s)
    EXPECT_NEAR(r.simulated[s], r.reference[s], 1e-4 * std::fabs(r.reference[s])) << "step " << s;
  ASSERT_EQ(r.simulatedWeights.size(), replicas);
  for (std::size_t t = 0; t < r.referenceWeights.size(); ++t) {
    const auto& ref = r.referenceWeights[t];
    for (std::uint32_t rep = 0; rep < replicas; ++rep) {
      ASSERT_EQ(r.simulatedWeights[rep][t].size(), ref.size());
      // The all-reduce sums each chunk once and copies it: replicas agree exactly.
      EXPECT_EQ(r.simulatedWeights[rep][t], r.simulatedWeights[0][t]) << "tensor " << t << " replica " << rep;
    }
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(r.simulatedWeights[0][t][i], ref[i], 1e-5 + 1e-4 * std::fabs(ref[i])) << "tensor " << t << " [" << i << "]";
  }
}

TEST(Replication, FourReplicasOfBatch8TrainAsOneIpuWithBatch32) {
  const TrainingLosses r = runTraining(replicated(4), 20);
  expectReplicasMatchOneIpu(r, 4, 20);
}

TEST(Replication, TwoReplicasOfTheTutorialTrainAsOneIpuWithTheirGlobalBatch) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/mnist_with_feeds.json"));
  w.ipu.numIpus = 2;
  const TrainingLosses r = runTraining(w, 20);
  expectReplicasMatchOneIpu(r, 2, 20);
}

TEST(Replication, CompiledLayoutReplicatesTensorsStreamsAndAllReducesBeforeTheUpdates) {
  const scheduler::CompiledWorkload one = scheduler::compile(replicated(1));
  const scheduler::CompiledWorkload four = scheduler::compile(replicated(4));
  EXPECT_EQ(four.target.numIpus(), 4u);
  EXPECT_EQ(four.exe.ipusPerReplica, 1u);
  EXPECT_EQ(one.exe.ipusPerReplica, 0u);
  for (std::size_t s = 0; s < one.exe.streams.size(); ++s)
    EXPECT_EQ(four.exe.streams[s].elementsPerCopy, 4 * one.exe.streams[s].elementsPerCopy) << s;
  const ir::Tensor& w4 = four.exe.tensors[four.weightTensors[0]];
  const ir::Tensor& w1 = one.exe.tensors[one.weightTensors[0]];
  EXPECT_EQ(w4.numElements(), 4 * w1.numElements());
  // Replica 3's copy sits on IPU 3 at the addresses of replica 0's.
  ASSERT_EQ(w4.mapping.size(), 4 * w1.mapping.size());
  const ir::TileInterval& last = w4.mapping[3 * w1.mapping.size()];
  EXPECT_EQ(last.tile, w1.mapping[0].tile + 3 * 16);
  EXPECT_EQ(last.address, w1.mapping[0].address);
  // The step: ..., all_reduce, then the updates only.
  const ir::Program* step = nullptr;
  for (const auto& p : four.exe.programs)
    if (p.marksStep) step = &p;
  ASSERT_NE(step, nullptr);
  std::size_t at = 0;
  while (at < step->children.size() && four.exe.programs[step->children[at]].name != "all_reduce") ++at;
  ASSERT_LT(at, step->children.size());
  for (std::size_t i = at + 1; i < step->children.size(); ++i) {
    const std::string& name = four.exe.programs[step->children[i]].name;
    EXPECT_TRUE(name.find("update") != std::string::npos || name == "loss") << name;
  }
  // 2 (R - 1) exchanges, each after a sync, and R - 1 adds.
  const ir::Program& all = four.exe.programs[step->children[at]];
  EXPECT_EQ(all.children.size(), 2u * 3 * 2 + 3);
}

TEST(Replication, NumIpusDisagreeingWithTheTargetIsAnErrorNamingBoth) {
  auto w = replicated(4);
  model::Target t = scheduler::targetFor(w);
  t.set("ipuLink.numIpus", "2");
  try {
    scheduler::compile(w, t);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ipu.num_ipus is 4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 IPUs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::testing
