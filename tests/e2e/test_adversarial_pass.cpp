// Found by the second adversarial pass of issue 33 (acceptance 2): figures
// computed from values within the readers' rules that were still wrong (a
// wrapped sum, columns running together, an SQL sum that overflowed),
// reports written onto an input, inputs that grow time or memory without a
// stated bound, and unclear or doubled messages. Each case failed before
// its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <regex>

#include <sys/stat.h>

namespace ipusim::test::test_adversarial_pass {
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

// ---- files the commands write --------------------------------------------

TEST(AdversarialPass, ReportsAreNeverWrittenOntoAnInputOrAFifo) {
  // A workload named profile.pop (or serialized_graph.json) in its own
  // autoReport.directory was replaced by the report; a FIFO named
  // profile.pop was replaced by a file.
  ScratchDir dir("pass-report-inputs");
  const std::string small = readText(sourcePath("workloads/small_synthetic.json"));
  for (const char* name : {"profile.pop", "serialized_graph.json"}) {
    const fs::path workload = dir.path() / name;
    std::ofstream(workload) << small;
    const auto r = runCommand(ipusimBinary() + " run " + quote(workload.string()) + " --synthetic-data --engine-options " +
                              quote("{\"autoReport.all\":\"true\",\"autoReport.outputSerializedGraph\":\"true\","
                                    "\"autoReport.directory\":\"" + dir.path().string() + "\"}"));
    expectRefusal(r, workload.string() + ": is an input of this command");
    EXPECT_EQ(readText(workload), small);
    fs::remove(workload);
  }
  const fs::path fifoDir = dir.path() / "fifo";
  fs::create_directories(fifoDir);
  ASSERT_EQ(mkfifo((fifoDir / "profile.pop").c_str(), 0600), 0);
  expectRefusal(runCommand(withReports(fifoDir) + ipusimBinary() + " run " +
                           quote(sourcePath("workloads/small_synthetic.json")) + " --synthetic-data"),
                (fifoDir / "profile.pop").string() + ": is a FIFO; refusing to replace it");
  EXPECT_TRUE(fs::is_fifo(fifoDir / "profile.pop"));
}

TEST(AdversarialPass, AnEmptyOutputNameIsRefused) {
  // compile -o "" wrote nothing without a word (a script's unset variable);
  // sweep -o "" failed deep inside the sweep.
  const std::string small = quote(sourcePath("workloads/small_synthetic.json"));
  for (const std::string& command : {" compile " + small + " -o ''", " sweep " + small + " --vary tiles=16 -o ''"}) {
    const auto r = runCommand(ipusimBinary() + command);
    EXPECT_GT(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("--output: an empty file name"), std::string::npos) << r.output;
  }
}

TEST(AdversarialPass, ExportToAFailingStandardOutputSaysWhyOnce) {
  // "writing to standard output failed", then "cannot write to standard output": two messages, no cause.
  ScratchDir dir("pass-export-stdout");
  const fs::path profile = writeProfile(dir.path());
  expectRefusal(runCommand("{ " + ipusimBinary() + " export " + quote(profile.string()) + " -o - > /dev/full; }"),
                "ipusim export: cannot write the trace to standard output (No space left on device)");
}

// ---- inputs that grow time or memory --------------------------------------

TEST(AdversarialPass, CountsThatGrowTheWorkAreBoundedBeforeIt) {
  const std::string small = quote(sourcePath("workloads/small_synthetic.json"));
  std::string hundred, hundredClocks;
  for (int i = 0; i < 100; ++i) {
    hundred += (i ? "," : "") + std::to_string(16 + i);
    hundredClocks += (i ? "," : "") + std::to_string(1000000000 + i);
  }
  struct Case {
    std::string args, words;
  };
  for (const Case& c : std::vector<Case>{
           // A million threads were started.
           {" run " + small + " --synthetic-data --threads 65", "--threads: expected a whole number from 0 to 64, got '65'"},
           // A million points were planned (memory), then run.
           {" sweep " + small + " --synthetic-data --vary tiles=" + hundred + " --vary clockHz=" + hundredClocks +
                " --vary exchange.bytesPerCycle=" + hundred,
            "--vary: 100 x 100 x 100 values make more than 10000 points, the limit of a sweep"},
           // A process per point at once.
           {" sweep " + small + " --vary tiles=16 -j 257", "--jobs: expected a whole number from 1 to 256, got '257'"},
           // Ended as a bare "out of memory".
           {" example-graph -o /dev/null --elements-per-tile 1000000000000",
            "--elements-per-tile 1000000000000: x alone needs more than a tile's 638976 bytes of memory"},
           // "Could not convert: --tiles = 4294967297".
           {" run " + small + " --tiles 4294967297", "--tiles: expected a whole number from 1 to 4294967295, got '4294967297'"}}) {
    SCOPED_TRACE(c.args.substr(0, 200));
    const auto r = runCommand("timeout 60 " + ipusimBinary() + c.args);
    EXPECT_GT(r.exitCode, 0) << r.output.substr(0, 400);
    EXPECT_LT(r.exitCode, 124) << r.output.substr(0, 400);
    EXPECT_NE(r.output.find(c.words), std::string::npos) << r.output.substr(0, 400);
  }
}

// ---- messages ---------------------------------------------------------------

TEST(AdversarialPass, MessagesNameTheValueInWords) {
  ScratchDir dir("pass-messages");
  const std::string small = quote(sourcePath("workloads/small_synthetic.json"));
  // A value of 300 characters was quoted whole (and one of 100 kB too).
  const auto longValue = runCommand(ipusimBinary() + " run " + small + " --set exchange.bytesPerCycle=" + std::string(300, 'x'));
  expectRefusal(longValue, "invalid value '" + std::string(40, 'x') + "...' (expected an integer");
  EXPECT_LT(longValue.output.size(), 200u) << longValue.output;
  // An integer beyond 2^63 was "expected a positive integer, got 10000000000000000000".
  const std::string steps = workloadWith(dir.path(), [](nlohmann::json& j) { j["training"]["steps"] = 10000000000000000000ull; });
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(steps)),
                "training.steps: 10000000000000000000 is over the limit of 1099511627776");
  // A serialized graph that is no JSON leaked nlohmann's "[json.exception.parse_error.101]" (expectRefusal checks).
  const fs::path empty = dir.path() / "empty.json";
  std::ofstream(empty) << "";
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(empty.string())),
                "executable '" + empty.string() + "' is not valid JSON at byte 1: parse error");
}

TEST(AdversarialPass, ATimeTooLateForAJsonTraceNamesTheFile) {
  // Slices at 2^62 cycles (within the rules): the JSON trace's 64-bit units
  // cannot hold them, said without the file's name; Perfetto's can.
  ScratchDir dir("pass-late-times");
  const fs::path profile = writeProfile(dir.path());
  execSql(profile, "UPDATE slices SET ts = 4611686018427387904 - dur");
  const fs::path json = dir.path() / "t.json", perfetto = dir.path() / "t.pftrace";
  const auto refused = runCommand(ipusimBinary() + " export " + quote(profile.string()) + " -o " + quote(json.string()));
  expectRefusal(refused, "ipusim export: " + profile.string() + ": ");
  EXPECT_NE(refused.output.find("do not fit the trace's 64-bit trace units (export it as .pftrace instead)"),
            std::string::npos)
      << refused.output;
  EXPECT_FALSE(fs::exists(json));
  const auto r = runCommand(ipusimBinary() + " export " + quote(profile.string()) + " -o " + quote(perfetto.string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// ---- the viewer ----------------------------------------------------------------

TEST(AdversarialPass, AScreenshotRefusesALaneThatFailedToLoad) {
  // A damaged packed copy of the slices: the lanes stayed empty, their
  // "error (hover)" cut off by a one-row lane, and the screenshot was written.
  const std::string viewer = std::string(ipusim::test::binaryDir()) + "/bin/ipusim-view";
  if (!fs::exists(viewer) || runCommand("command -v xvfb-run").exitCode != 0) GTEST_SKIP() << "no viewer or xvfb-run";
  ScratchDir dir("pass-viewer-lane");
  const fs::path profile = trainingProfile(dir.path());
  execSql(profile, "UPDATE slice_chunks SET data = x'00'");
  const fs::path shots = dir.path() / "shots";
  fs::create_directories(shots);
  const fs::path png = shots / "shot.png";
  const auto r = runHeadless(quote(viewer) + " " + quote(profile.string()) + " --screenshot " + quote(png.string()));
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("ipusim-view: lane '"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(profile.string() + ": corrupt slice_chunks row"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(png));
  expectNoLitter(shots);
  // An empty --screenshot opened the window instead (a script's unset variable).
  const auto empty = runCommand("timeout 60 xvfb-run -a -s '-screen 0 1600x900x24' " + viewer + " " +
                                quote(profile.string()) + " --screenshot ''");
  EXPECT_GT(empty.exitCode, 0) << empty.output;
  EXPECT_LT(empty.exitCode, 124) << empty.output;
  EXPECT_NE(empty.output.find("--screenshot: an empty file name"), std::string::npos) << empty.output;
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass
