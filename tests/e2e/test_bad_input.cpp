// Bad input gets one clear message naming the culprit, a non-zero exit, and
// never a profile.pop; neither does a run killed or interrupted midway.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

namespace ipusim::test::test_bad_input {
namespace {

namespace fs = std::filesystem;

std::string runGraph(const ScratchDir& dir, const std::string& extraOptions, const std::string& graph) {
  return "POPLAR_ENGINE_OPTIONS=" +
         quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"" + extraOptions + "}") +
         " " + ipusimBinary() + " run --graph " + quote(graph);
}

const std::string kGraph = sourcePath("workloads/graphs/stream_pipeline.json");

TEST(BadInput, UnknownEngineOptionNamesItAndTheNearestValidOne) {
  ScratchDir dir("bad-option");
  const auto r = runCommand(runGraph(dir, ",\"autoReport.bogus\":\"true\"", kGraph));
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("'autoReport.bogus'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nearest valid option"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
}

TEST(BadInput, MalformedJsonInTheEnvironmentIsNamed) {
  ScratchDir dir("bad-json");
  const auto r = runCommand("POPLAR_ENGINE_OPTIONS='{\"autoReport.all\":' " + ipusimBinary() + " run --graph " + kGraph);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("POPLAR_ENGINE_OPTIONS: malformed JSON"), std::string::npos) << r.output;
}

TEST(BadInput, MalformedOptionValueNamesTheKeyAndWhatItAccepts) {
  ScratchDir dir("bad-value");
  const auto r = runCommand(runGraph(dir, ",\"autoReport.executionProfileProgramRunCount\":\"many\"", kGraph));
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("autoReport.executionProfileProgramRunCount"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("expected a whole number from 0 to 999999999999999999"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
}

TEST(BadInput, MissingGraphFileIsNamed) {
  ScratchDir dir("missing-graph");
  const std::string missing = (dir.path() / "nowhere.json").string();
  const auto r = runCommand(runGraph(dir, "", missing));
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("nowhere.json"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
}

TEST(BadInput, MalformedGraphFileIsNamedWithWhereItBreaks) {
  ScratchDir dir("malformed-graph");
  const fs::path graph = dir.path() / "broken.json";
  std::ofstream(graph) << "{\"format\": \"ipusim-executable\", \"tensors\": [";
  const auto r = runCommand(runGraph(dir, "", graph.string()));
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("broken.json"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
  // One message, not a cascade.
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

// Starts a long run in the background, signals it midway, and checks the outcome.
CommandResult signalMidway(const ScratchDir& dir, int signal) {
  const fs::path log = dir.path() / "log.txt";
  const std::string command = runGraph(dir, "", kGraph) + " --runs 100000000 >" + quote(log.string()) + " 2>&1 & echo $!";
  const auto started = runCommand(command);
  const pid_t pid = std::stoi(started.output);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(pid, signal);
  CommandResult result;
  for (int i = 0; i < 100 * kSlowdown && kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  result.exitCode = kill(pid, 0) == 0 ? -1 : 0;  // -1: still running after 5 s (x kSlowdown)
  if (result.exitCode == -1) kill(pid, SIGKILL);  // a failed test leaves no run behind
  std::ifstream in(log);
  result.output.assign(std::istreambuf_iterator<char>(in), {});
  return result;
}

TEST(BadInput, InterruptStopsPromptlyAndLeavesNoProfile) {
  ScratchDir dir("interrupt");
  const auto r = signalMidway(dir, SIGINT);
  EXPECT_EQ(r.exitCode, 0) << "still running 5 s after Ctrl-C";
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find("profile.pop"), std::string::npos) << entry.path();
}

TEST(BadInput, KilledRunLeavesNoProfile) {
  ScratchDir dir("kill");
  const auto r = signalMidway(dir, SIGKILL);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_FALSE(fs::exists(dir.path() / "profile.pop"));
}

}  // namespace
}  // namespace ipusim::test::test_bad_input
