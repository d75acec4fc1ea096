// Replication (scheduler/multi_ipu/replication.hpp): R replicas x batch b train as one
// IPU with batch R x b over the same examples; the compiled layout.
#include "replica_expectations.hpp"
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace ipusim::testing::replication_test {
namespace {

scheduler::Workload replicated(std::uint32_t replicas) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/small_synthetic.json"));
  w.ipu.numIpus = replicas;
  return w;
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

scheduler::Workload withAdam(std::uint32_t replicas, bool sharded) {
  auto w = replicated(replicas);
  w.optimizer.type = "adam";
  w.optimizer.learningRate = 0.01;
  w.training.replicatedOptimizerStateSharding = sharded;
  return w;
}

// A fused rule's mean gradient: the reduce-scatter's owners scale their
// chunks by 1 / R before the all-gather (collectives.hpp).
TEST(Replication, AdamOnFourReplicasTrainsAsOneIpuWithTheirGlobalBatch) {
  const TrainingLosses r = runTraining(withAdam(4, false), 20);
  expectReplicasMatchOneIpu(r, 4, 20);
}

TEST(ReplicatedTensorSharding, ShardedAdamOnFourReplicasTrainsAsOneIpuWithTheirGlobalBatch) {
  const TrainingLosses r = runTraining(withAdam(4, true), 20);
  expectReplicasMatchOneIpu(r, 4, 20);
}

// The layout: every slot is planned at ceil(n / R) elements per interval of
// its weight's mapping, on the interval's tile; the step runs reduce_scatter
// right before the updates and all_gather right after them; the replicas'
// update vertices write every element of a weight exactly once.
TEST(ReplicatedTensorSharding, CompiledLayoutShardsTheStateAndGathersTheWeights) {
  const std::uint32_t replicas = 4;
  const scheduler::CompiledWorkload reduced = scheduler::compile(withAdam(replicas, false));
  const scheduler::CompiledWorkload sharded = scheduler::compile(withAdam(replicas, true));
  const ir::Executable& exe = sharded.exe;
  std::size_t slots = 0;
  for (ir::Id w : sharded.weightTensors) {
    const ir::Tensor& weight = exe.tensors[w];
    const std::uint64_t n = weight.numElements() / replicas;
    std::uint64_t expected = 0;
    for (std::size_t i = 0; i < weight.mapping.size() / replicas; ++i)
      expected += (weight.mapping[i].end - weight.mapping[i].begin + replicas - 1) / replicas;
    for (const char* slot : {"/m", "/v"})
      for (const ir::Tensor& t : exe.tensors)
        if (t.name == weight.name + slot) {
          ++slots;
          EXPECT_EQ(t.numElements(), replicas * expected) << t.name;
          EXPECT_LT(expected, n / 2) << t.name;  // 1/4 of the weight, rounded up per interval
          EXPECT_EQ(t.category, "optimizer");
        }
    for (const ir::Tensor& t : reduced.exe.tensors)
      if (t.name == weight.name + "/m") {
        EXPECT_EQ(t.numElements(), replicas * n) << t.name;
      }
    // Every element of the weight written once by the updates: by the
    // replica owning its chunk, in that replica's copy (the all-gather
    // brings it to the others).
    std::vector<int> writes(n, 0);
    for (const ir::ComputeSet& cs : exe.computeSets)
      for (const ir::Vertex& v : cs.vertices)
        if (v.codelet == "AdamUpdate")
          for (const ir::VertexField& f : v.fields)
            if (f.name == "data" && f.ref.tensor == w)
              for (std::uint64_t e = f.ref.begin; e < f.ref.end; ++e) ++writes[e % n];
    for (std::uint64_t e = 0; e < writes.size(); ++e) ASSERT_EQ(writes[e], 1) << weight.name << " element " << e;
  }
  EXPECT_EQ(slots, 2 * sharded.weightTensors.size());
  const ir::Program* step = nullptr;
  for (const auto& p : exe.programs)
    if (p.marksStep) step = &p;
  ASSERT_NE(step, nullptr);
  std::vector<std::string> names;
  for (ir::Id child : step->children) names.push_back(exe.programs[child].name);
  const auto scatter = std::find(names.begin(), names.end(), "reduce_scatter");
  const auto gather = std::find(names.begin(), names.end(), "all_gather");
  ASSERT_NE(scatter, names.end());
  ASSERT_NE(gather, names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "all_reduce"), names.end());
  ASSERT_LT(scatter, gather);
  for (auto it = scatter + 1; it != gather; ++it) EXPECT_NE(it->find("update"), std::string::npos) << *it;
  EXPECT_NE((scatter + 1)->find("update"), std::string::npos);
  EXPECT_NE((gather - 1)->find("update"), std::string::npos);
  // reduce_scatter: R - 1 syncs, exchanges and adds, then the mean; all_gather: R - 1 syncs and exchanges.
  EXPECT_EQ(exe.programs[step->children[scatter - names.begin()]].children.size(), 3u * (replicas - 1) + 1);
  EXPECT_EQ(exe.programs[step->children[gather - names.begin()]].children.size(), 2u * (replicas - 1));
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
}  // namespace ipusim::testing::replication_test
