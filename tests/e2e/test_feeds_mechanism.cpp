// The tutorial's story comes from the mechanism, not from the fit: fewer
// Engine::run calls (more steps per execution) is never slower, and feeds
// with one step per run come close to no feeds at all. Timing only
// (--synthetic-data): the cycles are those of real data (tested below).
#include "cli_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ipusim::test::test_feeds_mechanism {
namespace {

nlohmann::json runJson(const std::string& args) {
  const auto r = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + ipusimBinary() + " run " + args + " --json");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  return nlohmann::json::parse(r.output.substr(r.output.find('{')));
}

constexpr int kSteps = 100;

TEST(FeedsMechanism, MoreStepsPerExecutionIsNeverSlower) {
  double previous = 1e300;
  for (int spe : {1, 2, 5, 10, 20, 50, 100}) {
    const auto out = runJson("workloads/mnist_with_feeds.json --synthetic-data --steps " + std::to_string(kSteps) +
                             " --steps-per-execution " + std::to_string(spe));
    EXPECT_EQ(out["engine_runs"].get<int>(), kSteps / spe);
    const double seconds = out["simulated_seconds"].get<double>();
    EXPECT_LE(seconds, previous) << "steps_per_execution " << spe << " is slower than the one before";
    previous = seconds;
  }
}

TEST(FeedsMechanism, FeedsWithOneStepPerRunComeCloseToNoFeeds) {
  const auto feeds = runJson("workloads/mnist_with_feeds.json --synthetic-data --steps 100 --steps-per-execution 1");
  const auto none = runJson("workloads/mnist_without_feeds.json --synthetic-data --steps 100");
  EXPECT_EQ(feeds["engine_runs"], 100);
  EXPECT_EQ(none["engine_runs"], 100);
  const double a = feeds["simulated_seconds"], b = none["simulated_seconds"];
  EXPECT_LE(a, b);            // the prefetch still hides the dataset
  EXPECT_GT(a, 0.9 * b);      // but every run pays its dispatch and stream start-up
}

TEST(FeedsMechanism, SyntheticDataGivesExactlyTheCyclesOfRealData) {
  for (const char* workload : {"workloads/mnist_with_feeds.json", "workloads/mnist_without_feeds.json"}) {
    const auto real = runJson(std::string(workload) + " --steps 40");
    const auto synthetic = runJson(std::string(workload) + " --steps 40 --synthetic-data");
    EXPECT_EQ(real["cycles"], synthetic["cycles"]) << workload;
    EXPECT_TRUE(synthetic["final_loss"].is_null());
    EXPECT_TRUE(real["final_loss"].is_number());
  }
}

TEST(FeedsMechanism, CapturedRunsHoldTenStepsWithFeedsAndOneWithout) {
  for (auto [workload, stepsPerRun] : {std::pair{"with_feeds", 10}, std::pair{"without_feeds", 1}}) {
    ScratchDir dir(std::string("captured-") + workload);
    const std::string options = "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() +
                                "\",\"autoReport.executionProfileProgramRunCount\":\"10\"}";
    const auto r = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && POPLAR_ENGINE_OPTIONS=" + quote(options) + " " +
                              ipusimBinary() + " run workloads/mnist_" + workload + ".json --steps 200 --synthetic-data");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto q = runCommand("sqlite3 " + quote((dir.path() / "profile.pop").string()) +
                              " \"SELECT count(*), min(steps), max(steps) FROM runs WHERE captured;"
                              " SELECT count(*) FROM slices WHERE category = 'step';\"");
    ASSERT_EQ(q.exitCode, 0) << q.output;
    EXPECT_EQ(q.output, "10|" + std::to_string(stepsPerRun) + "|" + std::to_string(stepsPerRun) + "\n" +
                            std::to_string(10 * stepsPerRun) + "\n")
        << workload;
  }
}

// The loss is stamped with the step that produced it: joined to the runs,
// every run holds exactly its own steps' losses, each inside the run.
TEST(FeedsMechanism, LossSamplesCarryTheRunAndStepThatProducedThem) {
  for (auto [workload, stepsPerRun] : {std::pair{"with_feeds", 10}, std::pair{"without_feeds", 1}}) {
    ScratchDir dir(std::string("loss-") + workload);
    const std::string options =
        "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}";
    const auto r = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && POPLAR_ENGINE_OPTIONS=" + quote(options) + " " +
                              ipusimBinary() + " run workloads/mnist_" + workload + ".json --steps 40");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto q = runCommand(
        "sqlite3 " + quote((dir.path() / "profile.pop").string()) +
        " \"SELECT count(*), min(n), max(n) FROM (SELECT count(*) AS n FROM counters AS c"
        " JOIN tracks AS t ON t.id = c.track_id WHERE t.name = 'loss' GROUP BY run_id);"
        " SELECT t.name, count(*) FROM counters AS c JOIN runs AS r ON r.id = c.run_id JOIN tracks AS t ON t.id = c.track_id"
        " WHERE c.ts >= r.start_cycle AND c.ts <= r.end_cycle AND c.step / " + std::to_string(stepsPerRun) +
        " = c.run_id GROUP BY t.name ORDER BY t.name;\"");
    ASSERT_EQ(q.exitCode, 0) << q.output;
    // The loss and, beside it, the accuracy: one of each per step, in the run that produced it.
    EXPECT_EQ(q.output, std::to_string(40 / stepsPerRun) + "|" + std::to_string(stepsPerRun) + "|" +
                            std::to_string(stepsPerRun) + "\naccuracy|40\nloss|40\n")
        << workload;
  }
}

// Every loss of a captured run is dequeued on the host's outfeed track: the
// run's last dequeue starts inside the run and ends after it, and is kept.
TEST(FeedsMechanism, EveryCapturedStepsLossHasItsOutfeedDequeue) {
  ScratchDir dir("dequeues");
  const auto r = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + autoReport(dir.path()) + ipusimBinary() +
                            " run workloads/mnist_with_feeds.json --steps 40 --synthetic-data");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto q = runCommand("sqlite3 " + quote((dir.path() / "profile.pop").string()) +
                            " \"SELECT count(*) FROM slices WHERE name = 'dequeue loss';"
                            " SELECT sum(steps) FROM runs WHERE captured;\"");
  ASSERT_EQ(q.exitCode, 0) << q.output;
  EXPECT_EQ(q.output, "20\n20\n");  // 2 captured runs of 10 steps
}

}  // namespace
}  // namespace ipusim::test::test_feeds_mechanism

namespace ipusim::test::test_feeds_mechanism {
namespace {

// Acceptance of the main job: the tutorial's 10,000 steps with the defaults.
// (Timing only: synthetic data has exactly the cycles of real data.)
TEST(TutorialTimes, WithinTwentyPercentOfTheHardwareAndTheRatioHolds) {
  const auto feeds = runJson("workloads/mnist_with_feeds.json --synthetic-data");
  const auto none = runJson("workloads/mnist_without_feeds.json --synthetic-data");
  EXPECT_EQ(feeds["steps"], 10000);
  EXPECT_EQ(none["steps"], 10000);
  const double a = feeds["simulated_seconds"], b = none["simulated_seconds"];
  EXPECT_NEAR(a, 14.62, 0.2 * 14.62);
  EXPECT_NEAR(b, 23.77, 0.2 * 23.77);
  EXPECT_GE(b / a, 1.4);
  EXPECT_LE(b / a, 1.9);
}

}  // namespace
}  // namespace ipusim::test::test_feeds_mechanism
