// Loss values do not depend on the number of host threads: the tutorial model
// trained for 300 steps with --threads 1, 2 and 4 gives bit-identical losses
// at every step. IPUSIM_WORKER_CHOICE=always makes every large phase run on
// the whole pool (the adaptive choice could keep some on one thread), so the
// parallel path is the one compared.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

namespace ipusim::test::test_thread_count_results {
namespace {

// Every step's loss, as text with 17 significant digits (exact for a double).
std::vector<std::string> lossesWithThreads(unsigned threads) {
  ScratchDir dir("threads" + std::to_string(threads));
  const std::string options = "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}";
  const auto run = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && IPUSIM_WORKER_CHOICE=always POPLAR_ENGINE_OPTIONS=" +
                              quote(options) + " " + ipusimBinary() + " run workloads/mnist_with_feeds.json --steps 300" +
                              " --threads " + std::to_string(threads));
  EXPECT_EQ(run.exitCode, 0) << run.output;
  return profileLosses(dir.path() / "profile.pop");
}

TEST(ThreadCountResults, LossesAreBitIdenticalForOneTwoAndFourThreads) {
  const std::vector<std::string> one = lossesWithThreads(1);
  ASSERT_EQ(one.size(), 300u);
  for (unsigned threads : {2u, 4u}) {
    const std::vector<std::string> many = lossesWithThreads(threads);
    ASSERT_EQ(many.size(), one.size()) << threads << " threads";
    for (std::size_t step = 0; step < one.size(); ++step)
      ASSERT_EQ(many[step], one[step]) << "step " << step << " with " << threads << " threads";
  }
}

TEST(ThreadCountResults, TheSummarySaysHowTheThreadsWereUsed) {
  // run --json reports the threads and how many large phases ran on all of
  // them; with IPUSIM_WORKER_CHOICE=always, every one did.
  auto hostThreads = [](const std::string& args) {
    const auto run = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && IPUSIM_WORKER_CHOICE=always " +
                                ipusimBinary() + " run workloads/mnist_with_feeds.json --steps 20 --json " + args);
    EXPECT_EQ(run.exitCode, 0) << run.output;
    return nlohmann::json::parse(run.output.substr(run.output.find('{'))).at("host_threads");
  };
  const nlohmann::json two = hostThreads("--threads 2");
  EXPECT_EQ(two.at("threads").get<int>(), 2);
  EXPECT_GT(two.at("large_phases").get<int>(), 0);
  EXPECT_EQ(two.at("pooled_phases"), two.at("large_phases"));
  const nlohmann::json one = hostThreads("--threads 1");
  EXPECT_EQ(one.at("threads").get<int>(), 1);
  EXPECT_EQ(one.at("large_phases").get<int>(), 0);
}

}  // namespace
}  // namespace ipusim::test::test_thread_count_results
