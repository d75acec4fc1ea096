// Found by the second adversarial pass of issue 33 (acceptance 2): figures
// computed from values within the readers' rules that were still wrong
// (a wrapped sum, columns running together, an SQL sum that overflowed).
// Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace ipusim::test {
namespace {

// A training run's profile (two runs; tensors, program work, tile detail) in `dir`.
fs::path trainingProfile(const fs::path& dir) {
  const auto r = runCommand(withReports(dir) + ipusimBinary() + " run " +
                            quote(sourcePath("workloads/mnist_with_feeds.json")) + " --steps 20 --synthetic-data");  // two runs
  EXPECT_EQ(r.exitCode, 0) << r.output;
  return dir / "profile.pop";
}

TEST(AdversarialPass, TheRunsSumsOfAReportAreChecked) {
  // Two runs of 2^62 steps each, each within the rules: the report printed
  // "-9223372036854775808 steps".
  ScratchDir dir("pass-run-sums");
  const fs::path profile = trainingProfile(dir.path());
  execSql(profile, "UPDATE runs SET steps = 4611686018427387904");
  for (const char* command : {" report ", " compare "}) {
    const std::string args = std::string(command) == " compare " ? quote(profile.string()) + " " : "";
    expectRefusal(runCommand(ipusimBinary() + command + args + quote(profile.string())),
                  profile.string() + ": damaged profile: the sum of runs.steps overflows 64 bits");
  }
}

TEST(AdversarialPass, OperationsColumnsNeverRunTogether) {
  // A program on 4,294,967,295 tiles and a tensor of 2^62 bytes, within the
  // rules: the tiles ran into the peak ("0.0%4294967295") and the memory
  // into the tiles ("14524611686018431596544 B" for 1452 tiles and
  // 4611686018431596544 B).
  ScratchDir dir("pass-ops-columns");
  const fs::path profile = trainingProfile(dir.path());
  execSql(profile,
          "UPDATE program_work SET tiles = 4294967295; "
          "UPDATE tensors SET bytes = 4611686018427387904 WHERE id = (SELECT min(id) FROM tensors WHERE layer != '')");
  const auto r = runCommand(ipusimBinary() + " report " + quote(profile.string()) + " --ops");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("% 4294967295 "), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(" 4294967295 +46116860184[0-9]* B")))
      << "the memory column is apart from the tiles column: " << r.output;
}

TEST(AdversarialPass, RangeStatisticsOfHugeTileCyclesAreComputed) {
  // Every tile's cycles at 2^62 (within the rules): SQLite's SUM over a
  // phase's tiles failed, and insights (the viewer's range statistics too)
  // said only "range statistics: integer overflow".
  ScratchDir dir("pass-tile-cycles");
  const fs::path profile = trainingProfile(dir.path());
  execSql(profile, "UPDATE tile_phase_cycles SET cycles = 4611686018427387904");
  const auto r = runCommand(ipusimBinary() + " insights " + quote(profile.string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(r.output.find("overflow"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test
