// The simulated IPU really trains: over 2,000 steps of the tutorial model on
// Fashion-MNIST the loss falls from about ln 10 to below 0.9, and the losses
// reach the profile through the outfeed as a `loss` counter, one per step.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ipusim::test::test_training_converges {
namespace {

TEST(TrainingConverges, TwoThousandStepsOfFashionMnistGetTheLossBelowPointNine) {
  ScratchDir dir("converges");
  const std::string options = "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}";
  const auto run = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && POPLAR_ENGINE_OPTIONS=" + quote(options) + " " +
                              ipusimBinary() + " run workloads/mnist_with_feeds.json --steps 2000");
  ASSERT_EQ(run.exitCode, 0) << run.output;

  std::vector<double> losses;
  for (const std::string& v : profileLosses(dir.path() / "profile.pop")) losses.push_back(std::stod(v));
  ASSERT_EQ(losses.size(), 2000u);  // one value per step
  EXPECT_NEAR(losses.front(), 2.30, 0.25);  // ~ln 10 before any learning
  double last100 = 0;
  for (std::size_t i = losses.size() - 100; i < losses.size(); ++i) last100 += losses[i];
  last100 /= 100;
  EXPECT_LT(last100, 0.9);
  std::cout << "first loss " << losses.front() << ", mean of the last 100: " << last100 << "\n";
}

}  // namespace
}  // namespace ipusim::test::test_training_converges
