// Found by the eighteenth adversarial pass of issue 33 (acceptance 2).
// Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace ipusim::test::test_adversarial_pass_18 {
namespace {

// Two replicas, each a tile over capacity, compiled with
// compile.allow_out_of_memory: `compile` and `run` said "1 tile OVER
// capacity" (tiles_over_capacity 1 in their --json) where the profile's
// `report` said 2 of the 8 tiles: one replica's count. One figure now.
TEST(AdversarialPass18, ReplicasTilesOverCapacityAreTheProfilesCount) {
  ScratchDir dir("replicas-over");
  const std::string file = replicatedMlp(dir.path(), "w.json", 2);
  const std::string over = " --set tile.memoryBytes=1600 --workload-set compile.allow_out_of_memory=true ";
  const nlohmann::json compiled = jsonOf(runCommand(ipusimBinary() + " compile --json" + over + quote(file)));
  EXPECT_EQ(compiled.value("tiles_over_capacity", 0), 2) << compiled.dump();
  const fs::path reports = dir.path() / "reports";
  auto r = runCommand(withReports(reports) + ipusimBinary() + " run --synthetic-data" + over + quote(file));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("warning: 2 tiles are over their capacity of 1600 bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(2 tiles OVER capacity: compile.allow_out_of_memory)"), std::string::npos) << r.output;
  const nlohmann::json report = jsonOf(runCommand(ipusimBinary() + " report --json " + quote(reports.string())));
  EXPECT_EQ(report["tile_memory"].value("tiles_over_capacity", 0), 2) << report["tile_memory"].dump();
}

// A name that is not UTF-8 in a profile (a track's, changed with sqlite3):
// the JSON export shows it as U+FFFD, but the Perfetto export wrote the raw
// byte into a protobuf string field, which must be UTF-8.
TEST(AdversarialPass18, PerfettoExportWritesNamesAsUtf8) {
  ScratchDir dir("pftrace-utf8");
  const fs::path profile = writeProfile(dir.path());
  execSql(profile, "UPDATE tracks SET name = CAST(X'54FF' AS TEXT) WHERE id = (SELECT MAX(id) FROM tracks)");
  // A sequence cut off (E2 82, then 'V'): one U+FFFD, as the JSON export writes it.
  execSql(profile, "UPDATE tracks SET name = CAST(X'55E28256' AS TEXT) WHERE id = (SELECT MIN(id) FROM tracks)");
  const fs::path out = dir.path() / "t.pftrace";
  const auto r = runCommand(ipusimBinary() + " export " + quote(profile.string()) + " -o " + quote(out.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string trace = readText(out);
  EXPECT_EQ(trace.find("T\xff"), std::string::npos);
  EXPECT_NE(trace.find("T\xef\xbf\xbd"), std::string::npos);
  EXPECT_NE(trace.find("U\xef\xbf\xbdV"), std::string::npos);
}

// A serialized graph placing tensors near 2^64: two tiles each holding a
// byte at 2^63 summed to 0 bytes in all, under the functional run's bound,
// and the load wrote outside the memory it had allocated (SIGSEGV); a
// tensor ending within 8 bytes of 2^64 rounded up to an empty tile, and its
// run went on silently.
TEST(AdversarialPass18, GraphAddressesNearTwoToThe64AreRefused) {
  ScratchDir dir("addresses");
  const auto graphWith = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json g = nlohmann::json::parse(readText(kGraph));
    edit(g);
    const fs::path file = dir.path() / name;
    std::ofstream(file) << g.dump();
    return file.string();
  };
  const std::string twoTiles = graphWith("two.json", [](nlohmann::json& g) {
    for (int i : {0, 1}) g["tensors"][5]["mapping"][i]["address"] = std::uint64_t(1) << 63;  // 'partials', tiles 0, 1
  });
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(twoTiles) + " --runs 1"),
                twoTiles + ": the compiled model's tiles hold at least 18446744073709551615 bytes in all, over the "
                           "8589934592 bytes a functional run simulates");
  const std::string top = graphWith("top.json", [](nlohmann::json& g) {
    g["tensors"][7]["mapping"][0]["address"] = ~std::uint64_t(0) - 7;  // 'total', one float
  });
  expectRefusal(runCommand(ipusimBinary() + " run --synthetic-data --graph " + quote(top) + " --runs 1"),
                top + ": tensors[7] 'total': mapping[0] [0,1) address 18446744073709551608 overflows");
}

// A --weights file whose name is not UTF-8 (it becomes the workload's
// model.weights, a JSON string) failed with the JSON library's text:
// "[json.exception.type_error.316] invalid UTF-8 byte at index 13: 0xFF".
TEST(AdversarialPass18, WeightsFileNameNotUtf8IsRefusedByItsFlag) {
  ScratchDir dir("weights-name");
  const fs::path weights = dir.path() / "w\xff.h5";
  std::ofstream(weights) << "not read";
  const std::string keras = sourcePath("workloads/keras/tutorial_mlp_tf2.json");
  expectRefusal(runCommand(ipusimBinary() + " run --synthetic-data --steps 10 --keras " + quote(keras) +
                           " --weights " + quote(weights.string())),
                "w\xef\xbf\xbd.h5\": the file name is not UTF-8 text (U+FFFD shows each byte that is not); "
                "expected UTF-8, as model.weights in a workload file");
}

// The profile commands' and the demo's counts were CLI11's own: "-1" was
// taken as 2^64 - 1 (`report` listed every tile; `demo` failed with
// "POPLAR_ENGINE_OPTIONS: option 'autoReport.executionProfileProgramRunCount'
// = '18446744073709551615'", a variable the user never set), "abc" was
// "Could not convert: --liveness-steps = abc". And the engine option's own
// refusal of 19 digits said "expected a non-negative integer".
TEST(AdversarialPass18, CountOptionsOfReportAndDemoSayWhatTheyExpect) {
  struct Case {
    std::string command, words;
  };
  for (const Case& c : std::vector<Case>{
           {"ipusim report p.pop --fullest-tiles -1",
            "--fullest-tiles: expected a whole number from 0 to 18446744073709551615, got '-1'"},
           {"ipusim report p.pop --liveness --liveness-steps abc",
            "--liveness-steps: expected a whole number from 0 to 18446744073709551615, got 'abc'"},
           {"ipusim demo --captured-runs -1", "--captured-runs: expected a whole number from 0 to 999999999999999999, "
                                              "got '-1'"},
           {"POPLAR_ENGINE_OPTIONS='{\"autoReport.executionProfileProgramRunCount\":\"10000000000000000000\"}' "
            "ipusim run --graph " + quote(kGraph),
            "'autoReport.executionProfileProgramRunCount' = '10000000000000000000': expected a whole number from 0 to "
            "999999999999999999 (at most 18 digits)"}}) {
    SCOPED_TRACE(c.command);
    std::string command = c.command;
    command.replace(command.find("ipusim"), 6, ipusimBinary());
    const auto r = runCommand(command);
    EXPECT_GT(r.exitCode, 0) << r.output;
    EXPECT_LT(r.exitCode, 128) << r.output;
    EXPECT_NE(r.output.find(c.words), std::string::npos) << r.output;
  }
}

// A value below a double's smallest normal (1e-320, a finite number >= 0)
// was refused as not "a finite number >= 0" (a target parameter: strtod's
// ERANGE) or not "a non-negative number of seconds" (a host parameter:
// std::stod throws); it is that tiny number. inf and an empty value are
// still refused.
TEST(AdversarialPass18, ParametersTakeNumbersBelowTheSmallestNormal) {
  const std::string params = ipusimBinary() + " params --set streamingMemory.latencySeconds=1e-320";
  auto r = runCommand(params + " --set host.runDispatchSeconds=1e-320");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("streamingMemory.latencySeconds  1e-320"), std::string::npos) << r.output;
  expectRefusal(runCommand(params + " --set host.runDispatchSeconds="),
                "host parameter 'host.runDispatchSeconds' = '': expected a non-negative number of seconds");
  expectRefusal(runCommand(params + " --set streamingMemory.latencySeconds=1e400"),
                "target parameter 'streamingMemory.latencySeconds': invalid value '1e400' (expected a finite number "
                ">= 0, in s)");
}

// Two 2-D regions whose rows interleave (their extents meet) were checked
// for overlaps by listing every row, about 100 bytes a row: a graph of 4e6
// rows took 495 MB and 6 s, one of 1e8 rows (87 KB) 10 GB and minutes. The
// rows are now walked in order from the regions, in constant memory.
TEST(AdversarialPass18, InterleavedCopyRegionsAreCheckedInBoundedMemory) {
  if (kSanitizedBuild) GTEST_SKIP() << "a sanitized binary cannot run under ulimit -v";
  ScratchDir dir("interleaved-rows");
  nlohmann::json g = nlohmann::json::parse(readText(kGraph));
  const std::uint64_t n = 4000000;
  const std::size_t a = g["tensors"].size(), b = a + 1;
  for (std::size_t id : {a, b})
    g["tensors"].push_back({{"id", id}, {"name", id == a ? "from" : "to"}, {"shape", {n}}, {"dtype", "float"},
                            {"alwaysLive", true}, {"category", "temporaries"}, {"debug", {{"layer", "x"}, {"op", "y"}}},
                            {"mapping", {{{"tile", 0}, {"begin", 0}, {"end", n}, {"address", (id - a) * 4 * n}}}}});
  nlohmann::json& copy = g["programs"][7];  // 'gather': the even elements of one region, the odd of another
  copy.erase("src");
  copy.erase("dst");
  for (std::uint64_t odd : {0, 1})
    copy["regions"].push_back({{"src", {{"tensor", a}, {"begin", odd}, {"end", odd + 1}}},
                               {"dst", {{"tensor", b}, {"begin", odd}, {"end", odd + 1}}},
                               {"rows", n / 2}, {"srcStride", 2}, {"dstStride", 2}});
  g["options"]["debug.allowOutOfMemory"] = "true";
  const fs::path file = dir.path() / "g.json";
  std::ofstream(file) << g.dump();
  // (One host thread: each thread's stack counts in the address space.)
  const auto r = runCommand("ulimit -v 300000; " + ipusimBinary() +
                            " run --synthetic-data --threads 1 --runs 1 --graph " + quote(file.string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// Pass 18's doubts, judged defects and fixed after it: `compile -o -`,
// `example-graph -o -` and `predict --predictions -` wrote a file named "-"
// (export writes "-" to standard output; these print their summary there);
// a checkpoints string other than "auto" was "'AUTO' is not one of auto",
// not saying that a list of layer names is the other form.
TEST(AdversarialPass18, DoubtsJudged) {
  ScratchDir dir("doubts");
  const std::string workload = replicatedMlp(dir.path(), "w.json", 1);
  for (const std::string& command : {" compile " + quote(workload) + " -o -", std::string(" example-graph -o -"),
                                     " predict --synthetic-data " + quote(workload) + " --predictions -"}) {
    const auto r = runCommand("cd " + quote(dir.path().string()) + " && " + ipusimBinary() + command);
    EXPECT_NE(r.exitCode, 0) << command;
    EXPECT_NE(r.output.find("'-' (standard output carries this command's summary): expected a file name"),
              std::string::npos)
        << command << ": " << r.output;
    EXPECT_FALSE(fs::exists(dir.path() / "-")) << command;
  }
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(workload) +
                           " --workload-set 'training.recompute_checkpoints=\"AUTO\"'"),
                "training.recompute_checkpoints: expected \"auto\" or a non-empty list of layer names, got \"AUTO\"");
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_18
