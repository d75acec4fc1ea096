// Gradient accumulation without pipelining (scheduler/multi_ipu/gradient_accumulation.hpp):
// N mini-batches of b, one update with their summed gradient, train as one
// update on N x b at N x the learning rate; replicas combine with it.
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ipusim::testing::gradient_accumulation_test {
namespace {

scheduler::Workload small(std::uint32_t accumulation, std::uint32_t replicas) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/small_synthetic.json"));
  w.training.gradientAccumulationCount = accumulation;
  w.ipu.numIpus = replicas;
  return w;
}

TEST(GradientAccumulation, FourMiniBatchesPerUpdateTrainAsOneBatchOfFour) {
  const TrainingLosses r = runTraining(small(4, 1), 20);
  expectTrainsAsAccumulation(r, 4, 20);
}

TEST(GradientAccumulation, CombinesWithReplication) {
  const TrainingLosses r = runTraining(small(2, 2), 20);
  expectTrainsAsAccumulation(r, 2, 20);
}

// A fused rule reads the accumulated sum as its `grad`: SGD with momentum
// on N x the mean gradient is SGD with momentum at N x the rate.
scheduler::Workload withMomentum(std::uint32_t accumulation, std::uint32_t replicas, bool sharded) {
  auto w = small(accumulation, replicas);
  w.optimizer.momentum = 0.9;
  w.optimizer.learningRate = 0.01;
  w.training.replicatedOptimizerStateSharding = sharded;
  return w;
}

TEST(GradientAccumulation, MomentumTrainsAsOneBatchOfFour) {
  const TrainingLosses r = runTraining(withMomentum(4, 1, false), 20);
  expectTrainsAsAccumulation(r, 4, 20);
}

TEST(GradientAccumulation, MomentumCombinesWithShardedReplicas) {
  const TrainingLosses r = runTraining(withMomentum(2, 2, true), 20);
  expectTrainsAsAccumulation(r, 2, 20);
}

TEST(GradientAccumulation, UpdatesRunOncePerCountInTheProgram) {
  const scheduler::CompiledWorkload c = scheduler::compile(small(4, 1));
  const ir::Program* inner = nullptr;
  for (const auto& p : c.exe.programs)
    if (p.name == "gradient_accumulation_count") inner = &p;
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->count, 4u);
  for (const auto& p : c.exe.programs) {
    if (p.name == "steps_per_execution") {
      EXPECT_EQ(p.count, 1u);  // 4 steps per execution / 4
    }
  }
}

TEST(GradientAccumulation, ACountNotDividingStepsPerExecutionNamesTheKey) {
  nlohmann::json j = {{"dataset", {{"format", "synthetic"}}},
                      {"model", {{"layers", {{{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}}}}},
                      {"training", {{"steps", 12}, {"steps_per_execution", 6}, {"gradient_accumulation_count", 4}}}};
  try {
    scheduler::parseWorkload(j, "ga.json");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ga.json: training.gradient_accumulation_count: 4 must divide steps_per_execution (6)"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::testing::gradient_accumulation_test
