// Found by the eighteenth adversarial pass of issue 33 (acceptance 2).
// Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>

namespace ipusim::test::test_adversarial_pass_18 {
namespace {

// `dir`/w.json: a two-layer MLP trained two steps on 4 tiles, over `ipus` replicas.
std::string smallMlp(const fs::path& dir, int ipus) {
  const fs::path file = dir / "w.json";
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "name": "a"},
                         {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}]},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 2, "steps_per_execution": 2},
    "ipu": {"tiles": 4, "num_ipus": )" << ipus << "}}";
  return file.string();
}

// Two replicas, each a tile over capacity, compiled with
// compile.allow_out_of_memory: `compile` and `run` said "1 tile OVER
// capacity" (tiles_over_capacity 1 in their --json) where the profile's
// `report` said 2 of the 8 tiles: one replica's count. One figure now.
TEST(AdversarialPass18, ReplicasTilesOverCapacityAreTheProfilesCount) {
  ScratchDir dir("replicas-over");
  const std::string file = smallMlp(dir.path(), 2);
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
  const fs::path out = dir.path() / "t.pftrace";
  const auto r = runCommand(ipusimBinary() + " export " + quote(profile.string()) + " -o " + quote(out.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string trace = readText(out);
  EXPECT_EQ(trace.find("T\xff"), std::string::npos);
  EXPECT_NE(trace.find("T\xef\xbf\xbd"), std::string::npos);
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_18
