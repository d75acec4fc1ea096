// `ipusim run` with a learning-rate schedule: the rate computed on the device
// each step comes back with the loss and is recorded as the `learning_rate`
// counter, beside `loss` and `accuracy`, with feeds and without.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ipusim::test::test_learning_rate_counter {
namespace {

CommandResult counters(const ScratchDir& dir) {
  return runCommand("sqlite3 " + quote((dir.path() / "profile.pop").string()) +
                    " \"SELECT t.name, count(*) FROM counters AS c JOIN tracks AS t ON t.id = c.track_id"
                    " GROUP BY t.name ORDER BY t.name;\"");
}

std::string autoReport(const ScratchDir& dir) {
  return "POPLAR_ENGINE_OPTIONS=" + quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}") + " ";
}

// SGD with InverseTimeDecay(0.1, decay_steps 2, decay_rate 0.5): 0.1 / (1 + 0.5 s / 2) at iteration s.
TEST(LearningRateCounter, ScheduleIsACounterBesideTheLoss) {
  ScratchDir dir("learning-rate");
  const auto r = runCommand(autoReport(dir) + ipusimBinary() + " run " + quote(sourcePath("bench/torch/sgd_inverse_time.json")));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto q = counters(dir);
  ASSERT_EQ(q.exitCode, 0) << q.output;
  EXPECT_EQ(q.output, "accuracy|20\nlearning_rate|20\nloss|20\n");
  const auto v = runCommand("sqlite3 " + quote((dir.path() / "profile.pop").string()) +
                            " \"SELECT printf('%.6f', c.value) FROM counters AS c JOIN tracks AS t ON t.id = c.track_id"
                            " WHERE t.name = 'learning_rate' ORDER BY c.ts;\"");
  ASSERT_EQ(v.exitCode, 0) << v.output;
  EXPECT_EQ(v.output.substr(0, 18), "0.100000\n0.080000\n") << v.output;  // iterations 0 and 1
  EXPECT_NE(v.output.find("0.017391\n"), std::string::npos) << v.output;  // iteration 19: 0.1 / 5.75
}

TEST(LearningRateCounter, WithoutFeedsEachRunBringsItsRate) {
  ScratchDir dir("learning-rate-no-feeds");
  const auto r = runCommand(autoReport(dir) + ipusimBinary() + " run " + quote(sourcePath("bench/torch/adamw_cosine.json")) +
                            " --no-feeds --steps 8");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto q = counters(dir);
  ASSERT_EQ(q.exitCode, 0) << q.output;
  EXPECT_EQ(q.output, "accuracy|8\nlearning_rate|8\nloss|8\n");
}

}  // namespace
}  // namespace ipusim::test::test_learning_rate_counter
