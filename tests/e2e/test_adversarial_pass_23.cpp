// Found by the twenty-third adversarial pass of issue 33 (acceptance 2), and
// fixed in it. Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace ipusim::test::test_adversarial_pass_23 {
namespace {

// A name holding a control character (a workload's, a layer's, a Keras
// layer's) was printed raw by `run`'s summary, `compile`, `report`,
// `report --ops`, `--liveness` and `compare`: an escape sequence turned the
// terminal red, a newline split the summary's line. Refused as it is read,
// naming the key and showing the name as a JSON string.
TEST(AdversarialPass23, ANameHoldingAControlCharacterIsRefused) {
  ScratchDir dir("control-names");
  const std::string evil = "evil\x1b[31mRED\nsecond";
  const std::string workload = workloadWith(dir.path(), [&](nlohmann::json& j) { j["name"] = evil; });
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(workload)),
                "w.json: name: \"evil\\u001b[31mRED\\nsecond\" holds a control character");
  const std::string layer =
      workloadWith(dir.path(), [&](nlohmann::json& j) { j["model"]["layers"][1]["name"] = "dense\tone"; });
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(layer) + " --synthetic-data --steps 10"),
                "w.json: model.layers[1].name: \"dense\\tone\" holds a control character");
  nlohmann::json keras = nlohmann::json::parse(readText(sourcePath("workloads/keras/tutorial_mlp_tf2.json")));
  keras["config"]["layers"].back()["config"]["name"] = evil;
  const fs::path kerasFile = dir.path() / "k.json";
  std::ofstream(kerasFile) << keras.dump();
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(kerasFile.string()) +
                           " --synthetic-data --steps 10"),
                "k.json: a layer's name: \"evil\\u001b[31mRED\\nsecond\" holds a control character");
}

// A serialized graph's names (its own, its programs', their debug layers)
// were taken as they were: `run --graph` printed the graph's name raw, and
// its profile carried the others into `report`. Refused as the graph is read.
TEST(AdversarialPass23, AGraphNameHoldingAControlCharacterIsRefused) {
  ScratchDir dir("control-graph");
  for (const std::string& at : std::vector<std::string>{"name", "program", "layer"}) {
    nlohmann::json graph = nlohmann::json::parse(readText(kGraph));
    if (at == "name") graph["name"] = "g\x1b[2J";
    if (at == "program") graph["programs"][0]["name"] = "rot\nate";
    if (at == "layer") graph["programs"][0]["debug"]["layer"] = "pipe\rline";
    const fs::path file = dir.path() / "g.json";
    std::ofstream(file) << graph.dump();
    const std::string expected = (at == "name"      ? std::string("name: \"g\\u001b[2J\"")
                                  : at == "program" ? std::string("programs[0].name: \"rot\\nate\"")
                                                    : std::string("programs[0].debug.layer: \"pipe\\rline\"")) +
                                 " holds a control character";
    expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(file.string()) + " --runs 1"), expected);
  }
}

// The run summary printed the paths it names raw: an autoReport.directory
// holding a newline split the `profile` line in two. Shown as one line.
TEST(AdversarialPass23, TheSummarysPathsAreOneLineEach) {
  ScratchDir dir("control-paths");
  const fs::path reports = dir.path() / "a\nb";
  const nlohmann::json options = {{"autoReport.all", "true"}, {"autoReport.directory", reports.string()}};
  const auto r = runCommand("POPLAR_ENGINE_OPTIONS=" + quote(options.dump()) + " " + ipusimBinary() + " run " +
                            quote(sourcePath("workloads/mnist_with_feeds.json")) + " --steps 10 --synthetic-data");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(fs::exists(reports / "profile.pop"));
  EXPECT_NE(r.output.find("profile          \"" + (dir.path() / "a\\nb" / "profile.pop").string() + "\"\n"),
            std::string::npos)
      << r.output;
}

// A profile that captured no run (autoReport.executionProfileProgramRunCount
// 0) has nothing to measure "IPU waiting for the host" over: `run`, `report`,
// `insights` and `compare` said 0.0% (the IPU never waits) and --json 0.0;
// `compare` gave every share of the captured runs as 0.0%, idle too.
TEST(AdversarialPass23, NoCapturedRunGivesNoHostWaitFigure) {
  ScratchDir dir("uncaptured");
  const nlohmann::json options = {{"autoReport.all", "true"},
                                  {"autoReport.directory", (dir.path() / "r").string()},
                                  {"autoReport.executionProfileProgramRunCount", "0"}};
  const std::string run = "POPLAR_ENGINE_OPTIONS=" + quote(options.dump()) + " " + ipusimBinary() + " run " +
                          quote(sourcePath("workloads/mnist_with_feeds.json")) + " --steps 20 --synthetic-data";
  const auto text = runCommand(run);
  ASSERT_EQ(text.exitCode, 0) << text.output;
  EXPECT_NE(text.output.find("IPU waits, host  n/a (no run captured"), std::string::npos) << text.output;
  EXPECT_TRUE(jsonOf(runCommand(run + " --json"))["ipu_waiting_for_host"].is_null());
  const std::string profile = quote((dir.path() / "r").string());
  const auto report = runCommand(ipusimBinary() + " report " + profile);
  EXPECT_NE(report.output.find("IPU waiting for the host: n/a (no run captured"), std::string::npos) << report.output;
  EXPECT_TRUE(jsonOf(runCommand(ipusimBinary() + " report --json " + profile))["ipu_waiting_for_host"].is_null());
  const auto insights = runCommand(ipusimBinary() + " insights " + profile);
  EXPECT_NE(insights.output.find("(host wait n/a)"), std::string::npos) << insights.output;
  // (and no share of the captured runs: compute, idle ... read 0.0% each)
  const auto compare = runCommand(ipusimBinary() + " compare " + profile + " " + profile);
  for (const char* label : {"IPU waiting for the host", "  compute ", "  idle ", "host IO hidden behind the device"}) {
    const std::size_t at = compare.output.find(label);
    ASSERT_NE(at, std::string::npos) << label << " in " << compare.output;
    const std::string line = compare.output.substr(at, compare.output.find('\n', at) - at);
    EXPECT_NE(line.find("n/a"), std::string::npos) << line;
    EXPECT_EQ(line.find('%'), std::string::npos) << line;
  }
  const nlohmann::json figures = jsonOf(runCommand(ipusimBinary() + " compare --json " + profile + " " + profile));
  EXPECT_TRUE(figures["a"]["proportions"]["idle"].is_null()) << figures.dump();
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_23
