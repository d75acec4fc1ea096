// The main job's failure modes: Ctrl-C, an unwritable report directory and a
// full disk each end with a clear message and no profile.pop.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

namespace ipusim::test::test_training_errors {
namespace {

namespace fs = std::filesystem;

std::string trainInto(const std::string& directory, const std::string& extra = "") {
  const std::string options = "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + directory + "\"}";
  return "cd " + quote(IPUSIM_SOURCE_DIR) + " && POPLAR_ENGINE_OPTIONS=" + quote(options) + " exec " +
         ipusimBinary() + " run workloads/mnist_with_feeds.json " + extra;
}

bool anyProfileFile(const fs::path& dir) {
  if (!fs::exists(dir)) return false;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().find("profile.pop") != std::string::npos) return true;
  return false;
}

TEST(TrainingErrors, CtrlCStopsPromptlySaysSoAndLeavesNoProfile) {
  ScratchDir dir("train-interrupt");
  const fs::path log = dir.path() / "log.txt";
  // The subshell execs ipusim, so $! is the simulator's own pid.
  const auto started = runCommand("(" + trainInto((dir.path() / "out").string(), "--synthetic-data --steps 10000000")
                                 + ") >" + quote(log.string()) + " 2>&1 & echo $!");
  const pid_t pid = std::stoi(started.output);
  // Wait until the simulation is under way (the profile's temporary file exists).
  for (int i = 0; i < 200 * kSlowdown && !anyProfileFile(dir.path() / "out"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!anyProfileFile(dir.path() / "out")) {
    kill(pid, SIGKILL);
    FAIL() << "the run never reached its simulation";
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  const auto t0 = std::chrono::steady_clock::now();
  while (kill(pid, 0) == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10 * kSlowdown))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (kill(pid, 0) == 0) kill(pid, SIGKILL);  // a failed test leaves no run behind
  EXPECT_LT(seconds, 5.0 * kSlowdown) << "Ctrl-C did not stop the run promptly";
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(output.find("interrupted"), std::string::npos) << output;
  // "no profile written" when the signal came during the steps; "nothing written" when a slow
  // (sanitized) run was still setting up after opening its temporary profile.
  EXPECT_TRUE(output.find("no profile written") != std::string::npos ||
              output.find("(SIGINT); nothing written") != std::string::npos)
      << output;
  EXPECT_FALSE(anyProfileFile(dir.path() / "out"));
}

TEST(TrainingErrors, StepCountsChangedOnTheCommandLineAreCheckedBeforeTheRun) {
  // --steps and --steps-per-execution bypass the workload file's checks: they
  // are checked again, before the compile, naming the key. A pipeline whose
  // accumulation does not divide the steps per execution once ran 0 cycles
  // and reported success.
  ScratchDir dir("train-step-counts");
  const auto steps = runCommand(trainInto((dir.path() / "out").string(), "--steps 4"));
  EXPECT_EQ(steps.exitCode, 1) << steps.output;
  EXPECT_NE(steps.output.find("training.steps: 4 must be a multiple of training.steps_per_execution (10)"),
            std::string::npos)
      << steps.output;
  const auto pipeline = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + ipusimBinary() +
                                   " run workloads/mnist_pipelined_2ipus.json --steps 1 --steps-per-execution 1 "
                                   "--synthetic-data");
  EXPECT_EQ(pipeline.exitCode, 1) << pipeline.output;
  EXPECT_NE(pipeline.output.find("pipeline.gradient_accumulation_count: 8 must divide "
                                 "training.steps_per_execution (1)"),
            std::string::npos)
      << pipeline.output;
  EXPECT_FALSE(anyProfileFile(dir.path() / "out"));
}

TEST(TrainingErrors, UnwritableReportDirectoryIsAClearError) {
  ScratchDir dir("train-unwritable");
  const fs::path blocker = dir.path() / "a-file";
  std::ofstream(blocker) << "not a directory";
  const auto r = runCommand(trainInto((blocker / "reports").string(), "--steps 10 --synthetic-data"));
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("a-file"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;
}

TEST(TrainingErrors, FullDiskIsAClearErrorAndLeavesNoProfile) {
  ScratchDir dir("train-full");
  // A file-size limit makes every write past 64 KiB fail, as a full disk does.
  const auto r = runCommand("bash -c " + quote("ulimit -f 64; trap '' XFSZ; " +
                                               trainInto((dir.path() / "out").string(), "--steps 200 --synthetic-data")));
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("profile.pop"), std::string::npos) << r.output;
  EXPECT_FALSE(anyProfileFile(dir.path() / "out"));
}

}  // namespace
}  // namespace ipusim::test::test_training_errors
