// Hostile or careless input, second pass (issue 33): no command destroys a
// file, no figure is silently wrong, no reader crashes or hangs. Every case
// ends with an exit code below 128 and one message naming the file, key or
// value; nothing is left behind and no existing file is changed.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/stat.h>

namespace ipusim::test {
namespace {

using Clock = std::chrono::steady_clock;

const std::string kWorkload = sourcePath("workloads/mnist_with_feeds.json");

std::string compile(const std::string& workload, const fs::path& output, const std::string& flags = "") {
  return ipusimBinary() + " compile " + quote(workload) + " -o " + quote(output.string()) + flags;
}

// ---- compile -o writes as export does ------------------------------------

TEST(CompileOutput, NeverOntoItsOwnWorkloadOrKerasFile) {
  ScratchDir dir("compile-self");
  const fs::path workload = dir.path() / "w.json";
  fs::copy_file(kWorkload, workload);
  const std::string before = readText(workload);
  expectRefusal(runCommand(compile(workload.string(), workload, " --force")), "input of this command");
  EXPECT_EQ(readText(workload), before);
  // Through another spelling of the same file.
  expectRefusal(runCommand(compile(workload.string(), dir.path() / "." / "w.json", " --force")), "input of this command");
  EXPECT_EQ(readText(workload), before);
  // A Keras workload: its model file is an input too.
  const std::string keras = sourcePath("workloads/tutorial_mlp_keras.json");
  const fs::path kerasFile = sourcePath("workloads/keras/tutorial_mlp_tf2.json");  // its model.keras
  ASSERT_TRUE(fs::exists(kerasFile)) << kerasFile;
  const std::string kerasBefore = readText(kerasFile);
  expectRefusal(runCommand(compile(keras, kerasFile, " --force")), "input of this command");
  EXPECT_EQ(readText(kerasFile), kerasBefore);
  expectNoLitter(dir.path());
}

TEST(CompileOutput, ReplacesAFileOnlyWithForceAndNeverThroughASymlink) {
  ScratchDir dir("compile-force");
  const fs::path out = dir.path() / "graph.json";
  std::ofstream(out) << "earlier work";
  expectRefusal(runCommand(compile(kWorkload, out)), "--force");
  EXPECT_EQ(readText(out), "earlier work");

  // A link to another file: with --force the link is replaced, the file it names is not.
  const fs::path precious = dir.path() / "precious.txt", link = dir.path() / "link.json";
  std::ofstream(precious) << "keep me";
  fs::create_symlink(precious, link);
  expectRefusal(runCommand(compile(kWorkload, link)), "--force");
  const auto r = runCommand(compile(kWorkload, link, " --force"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(precious), "keep me");
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_TRUE(nlohmann::json::accept(readText(link)));

  const auto forced = runCommand(compile(kWorkload, out, " --force"));
  ASSERT_EQ(forced.exitCode, 0) << forced.output;
  EXPECT_TRUE(nlohmann::json::accept(readText(out)));
  // The graph it wrote runs.
  const auto run = runCommand(ipusimBinary() + " run --graph " + quote(out.string()) + " --entry train --runs 1");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  expectNoLitter(dir.path());
}

TEST(CompileOutput, RefusesDirectoriesAndFifosBeforeCompiling) {
  ScratchDir dir("compile-targets");
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expectRefusal(runCommand("timeout 20 " + compile(kWorkload, fifo, " --force")), "is a FIFO");
  EXPECT_TRUE(fs::is_fifo(fifo));
  expectRefusal(runCommand(compile(kWorkload, dir.path(), " --force")), "is a directory");
  expectNoLitter(dir.path());
}

TEST(ExampleGraphOutput, ReplacesAFileOnlyWithForce) {
  ScratchDir dir("example-graph");
  const fs::path out = dir.path() / "graph.json";
  std::ofstream(out) << "earlier work";
  expectRefusal(runCommand(ipusimBinary() + " example-graph -o " + quote(out.string())), "--force");
  EXPECT_EQ(readText(out), "earlier work");
  const auto r = runCommand(ipusimBinary() + " example-graph --force -o " + quote(out.string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(out), readText(kGraph));
  expectNoLitter(dir.path());
}

}  // namespace
}  // namespace ipusim::test
