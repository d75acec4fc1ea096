// Found by the nineteenth adversarial pass of issue 33 (acceptance 2).
// Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>

namespace ipusim::test::test_adversarial_pass_19 {
namespace {

// The profile's program_work.vertices (the Python reader's compute_sets())
// counted ipusim's own vertices, a per-worker vertex as one, where compile's
// `vertices` and tile_phase_cycles count the worker vertices Poplar's graph
// holds: 51 against 80 for this model. One figure now.
TEST(AdversarialPass19, ProfileCountsVerticesAsCompileDoes) {
  ScratchDir dir("vertices");
  const std::string file = replicatedMlp(dir.path(), "w.json", 1);
  const nlohmann::json compiled = jsonOf(runCommand(ipusimBinary() + " compile --json " + quote(file)));
  ASSERT_LT(compiled.value("ir_vertices", 0), compiled.value("vertices", 0)) << "no per-worker vertex to count";
  const fs::path reports = dir.path() / "reports";
  const auto r = runCommand(withReports(reports) + ipusimBinary() + " run --synthetic-data " + quote(file));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // Each compute set runs under one Execute program here.
  EXPECT_EQ(queryInt(reports / "profile.pop", "SELECT SUM(vertices) FROM program_work"),
            compiled.value("vertices", 0));
}

// A Keras model leaving its input sizes unknown: compile --keras refused it
// naming `run --keras`'s --input-shape, which compile did not take (CLI11:
// "workload excludes --keras"). compile takes it now, as run does.
TEST(AdversarialPass19, CompileTakesTheInputShapeItsRefusalNames) {
  ScratchDir dir("input-shape");
  nlohmann::json keras = nlohmann::json::parse(readText(sourcePath("workloads/keras/tutorial_mlp_tf2.json")));
  for (auto& layer : keras["config"]["layers"])  // [null, 28, 28] -> [null, null, null]
    if (layer["config"].contains("batch_input_shape")) layer["config"]["batch_input_shape"] = {nullptr, nullptr, nullptr};
  const fs::path model = dir.path() / "m.json";
  std::ofstream(model) << keras.dump();
  const std::string compile = ipusimBinary() + " compile --tiles 4 --keras " + quote(model.string());
  expectRefusal(runCommand(compile), "the Keras model's input is ?x? (sizes left unknown), so the dataset must give "
                                     "them (with --keras: --input-shape H,W,C)");
  auto r = runCommand(compile + " --input-shape 28,28");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  // Refusals name the flag, as run's do.
  expectRefusal(runCommand(compile + " --input-shape 28,0"), "--input-shape '28,0'");
  expectRefusal(runCommand(compile + " --input-shape 784"),
                "--input-shape on the workload made for " + model.string() + ": dataset.input_shape");
}

// Paths starting with '-' handed to a child process: gnuplot read sweep's
// script "-x/points/plot.gp" as an option, drew nothing and exited 0, and
// sweep said "plot: -x/sweep.png" of an empty file; a workload "-w.json"
// (given after "--") failed every point with "The following argument was
// not expected"; demo --out=-d failed its comparison with "a is required"
// (demo takes a second to run: its fix is sweep's, pathArgument). And the
// plot's title, the workload's name, ran `...` as a command: gnuplot
// substitutes it in double-quoted strings; a varied value holding a newline
// split its row of the plot's data in two (the points drawn misplaced;
// SweepResults.AValueHoldingANewlineIsOneRowOfThePlotsData since a layer
// name holding a newline is refused, pass 23).
TEST(AdversarialPass19, PathsAndNamesReachChildProcessesAsGiven) {
  ScratchDir dir("dash");
  const std::string workload = "-w`touch ran`.json";
  replicatedMlp(dir.path(), workload, 1);
  const auto r = runCommand("cd " + quote(dir.str()) + " && " + ipusimBinary() + " sweep --synthetic-data --vary " +
                            quote("model.layers[0].name=a,c") + " --output=-x -- " + quote(workload));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("2 of 2 points ran"), std::string::npos) << r.output;
  if (r.output.find("gnuplot not found") == std::string::npos) {
    EXPECT_GT(fs::file_size(dir.path() / "-x" / "sweep.png"), 0u) << r.output;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "ran"));
  const std::string data = readText(dir.path() / "-x" / "points" / "plot.dat");
  EXPECT_EQ(std::count(data.begin(), data.end(), '\n'), 3) << data;  // its header and a line a point
  // And "-" itself: the viewer wrote its screenshot as a file named "-",
  // where ipusim's outputs refuse it (standard output to `export`).
  const std::string viewer = std::string(binaryDir()) + "/bin/ipusim-view";
  const auto v = runCommand("cd " + quote(dir.str()) + " && " + viewer + " p --screenshot -");
  EXPECT_NE(v.exitCode, 0);
  EXPECT_NE(v.output.find("--screenshot: '-' (standard output carries this command's summary): expected a file name"),
            std::string::npos)
      << v.output;
  EXPECT_FALSE(fs::exists(dir.path() / "-"));
}

// demo's --out: a name that is not UTF-8 ended with the JSON library's
// "[json.exception.type_error.316] invalid UTF-8 byte" (it goes to the runs
// in POPLAR_ENGINE_OPTIONS), and an empty one wrote the runs' reports into
// the working directory, where sweep refuses an empty --output.
TEST(AdversarialPass19, DemoRefusesOutputsItCannotUse) {
  ScratchDir dir("demo-out");
  const std::string demo = "cd " + quote(dir.str()) + " && " + ipusimBinary() + " demo --steps 10 --no-screenshots";
  expectRefusal(runCommand(demo + " --out " + quote("d\xff")), "--out \"d\xef\xbf\xbd\": the runs write their reports");
  const auto r = runCommand(demo + " --out ''");
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("--out: an empty file name"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// A workload named by a file name that is not UTF-8: its serialized graph
// (compile -o, autoReport.outputSerializedGraph) failed with the JSON
// library's "[json.exception.type_error.316] invalid UTF-8 byte". Its name
// is written with U+FFFD, as compile --json shows it.
TEST(AdversarialPass19, GraphOfAWorkloadWhoseNameIsNotUtf8IsWritten) {
  ScratchDir dir("graph-name");
  const std::string file = replicatedMlp(dir.path(), "w\xff.json", 1);
  const fs::path graph = dir.path() / "g.json";
  const auto r = runCommand(ipusimBinary() + " compile " + quote(file) + " -o " + quote(graph.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(readText(graph).find("\"name\":\"w\xef\xbf\xbd\""), std::string::npos);
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_19
