// One definition per figure, end to end: the tutorial with feeds (shortened
// to 200 steps), profiled, then read by every output. "IPU waiting for the
// host" and the total cycles are the same number in `run --json`, `report
// --json`, each side of `compare --json` and the viewer (as is the fullest
// tile's peak), and with feeds the IPU waits for the host more than 90% of the time.
#include "tests/test_build.hpp"
#include "sample_profile.hpp"
#include "viewer/core/compare_summary.hpp"
#include "viewer/core/profile_session.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

namespace ipusim::viewer::testing::tutorial_figures_test {
namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command; returns its standard output, fails the test on a non-zero exit.
std::string shell(const std::string& command) {
  std::string output;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
  std::array<char, 4096> buffer{};
  while (pipe && fgets(buffer.data(), buffer.size(), pipe.get())) output += buffer.data();
  const int status = pclose(pipe.release());
  EXPECT_EQ(status, 0) << command << "\n" << output;
  return output;
}

nlohmann::json jsonOf(const std::string& output) { return nlohmann::json::parse(output.substr(output.find('{'))); }

TEST(TutorialFigures, IpuWaitingForTheHostIsOneNumberInEveryOutput) {
  ScratchDirectory dir;
  const std::string binary = std::string(ipusim::test::binaryDir()) + "/bin/ipusim";
  const std::string reportDir = dir.file("feeds");
  const std::string options = "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + reportDir + "\"}";
  const auto run = jsonOf(shell("cd " + quote(IPUSIM_SOURCE_DIR) + " && POPLAR_ENGINE_OPTIONS=" + quote(options) +
                                " " + binary + " run workloads/mnist_with_feeds.json --synthetic-data --steps 200 --json"));
  const std::string profile = reportDir + "/profile.pop";
  const auto report = jsonOf(shell(binary + " report " + quote(profile) + " --json"));
  const auto compare = jsonOf(shell(binary + " compare " + quote(profile) + " " + quote(profile) + " --json"));
  const ProfileSession session(profile, false);

  const double share = run["ipu_waiting_for_host"].get<double>();
  EXPECT_GT(share, 0.90);
  EXPECT_LE(share, 1.0);
  EXPECT_EQ(report["ipu_waiting_for_host"].get<double>(), share);
  EXPECT_EQ(compare["a"]["ipu_waiting_for_host"].get<double>(), share);
  EXPECT_EQ(compare["b"]["ipu_waiting_for_host"].get<double>(), share);
  EXPECT_EQ(session.hostWait().share(), share);
  bool shown = false;
  for (const auto& row : compareProfiles(session, session))
    if (row.metric == "IPU waiting for the host") {
      EXPECT_EQ(row.a, share);
      shown = true;
    }
  EXPECT_TRUE(shown) << "the viewer's compare table shows the figure";

  // The fullest tile's peak, too: `report`, each side of `compare` and the viewer's compare table.
  const auto fullest = report["tile_memory"]["max_bytes"].get<std::int64_t>();
  EXPECT_GT(fullest, 0);
  EXPECT_EQ(compare["a"]["max_tile_bytes"].get<std::int64_t>(), fullest);
  bool fullestShown = false;
  for (const auto& row : compareProfiles(session, session))
    if (row.metric == "Fullest tile (peak bytes)") {
      EXPECT_EQ(row.a, double(fullest));
      fullestShown = true;
    }
  EXPECT_TRUE(fullestShown);

  const auto cycles = run["cycles"].get<std::int64_t>();
  EXPECT_EQ(report["total_cycles"].get<std::int64_t>(), cycles);
  EXPECT_EQ(compare["a"]["simulated_cycles"].get<std::int64_t>(), cycles);
  EXPECT_EQ(session.jobCycles(), cycles);
}

}  // namespace
}  // namespace ipusim::viewer::testing::tutorial_figures_test
