// Acceptance: the compiled training step, run in the SystemC model, computes
// the same losses as the CPU reference (relative 1e-4), for every scheduling
// algorithm. One simulation per test (per process).
#include "training_harness.hpp"

#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ipusim::testing::training_acceptance_test {
namespace {

TEST(TrainingAcceptance, FashionMnistWithFeeds100StepsMatchReference) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/mnist_with_feeds.json"));
  const TrainingLosses r = runTraining(w, 100);
  expectSameLosses(r, 100);
  // It learns: the mean loss of the last 10 steps is below that of the first 10.
  double first = 0, last = 0;
  for (int i = 0; i < 10; ++i) first += r.simulated[i], last += r.simulated[90 + i];
  EXPECT_LT(last, first);
  std::printf("mnist_with_feeds: tiles used %u, estimated step %llu cycles, simulated 100 steps in %llu cycles\n",
              r.compiled.report.tilesUsed, (unsigned long long)r.compiled.report.estimatedStepCycles,
              (unsigned long long)r.cycles);
}

TEST(TrainingAcceptance, FashionMnistWithoutFeedsMatchReference) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/mnist_without_feeds.json"));
  const TrainingLosses r = runTraining(w, 20);
  expectSameLosses(r, 20);
}

TEST(TrainingAcceptance, OutfeedLastDeliversOneLossPerRun) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/small_synthetic.json"));
  w.training.outfeedMode = "LAST";
  const TrainingLosses r = runTraining(w, 12);
  ASSERT_EQ(r.simulated.size(), 3u);  // 3 runs of 4 steps
  for (std::size_t run = 0; run < 3; ++run)
    EXPECT_NEAR(r.simulated[run], r.reference[run * 4 + 3], 1e-4 * std::fabs(r.reference[run * 4 + 3]));
}

class EveryScheduler : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryScheduler, SameLossesAsReference) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/mnist_with_feeds.json"));
  w.scheduling = GetParam();
  const TrainingLosses r = runTraining(w, 20);
  expectSameLosses(r, 20);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, EveryScheduler,
                         ::testing::Values("post_order", "look_ahead", "shortest_path", "clustering", "choose_best"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ipusim::testing::training_acceptance_test
