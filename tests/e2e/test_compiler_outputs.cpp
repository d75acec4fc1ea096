// What the compiler leaves for users: a serialized graph that reruns with the
// same cycles, and an out-of-memory workload that is either a clear compile
// error or — with debug.allowOutOfMemory — a profile showing the over-full tiles.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace ipusim::test::test_compiler_outputs {
namespace {

namespace fs = std::filesystem;

std::string sql(const fs::path& profile, const std::string& query) {
  const auto r = runCommand("sqlite3 " + quote(profile.string()) + " " + quote(query));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  return r.output;
}

// Device cycles of run 0 by BSP phase, stream copies excepted (their Begin
// waits for whichever host program feeds them).
std::string deviceCycles(const fs::path& profile) {
  return sql(profile,
             "SELECT s.category, sum(s.dur) FROM slices s JOIN tracks t ON t.id = s.track_id "
             "WHERE t.kind = 'bsp' AND s.run_id = 0 AND s.category IN ('compute','exchange','sync') "
             "GROUP BY s.category ORDER BY s.category");
}

TEST(CompilerOutputs, SerializedGraphRerunsWithTheSameCycles) {
  ScratchDir dir("serialized");
  const fs::path compiled = dir.path() / "compiled", rerun = dir.path() / "rerun";
  const auto first = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " +
                                autoReport(compiled, ",\"autoReport.outputSerializedGraph\":\"true\"") +
                                ipusimBinary() + " run workloads/small_synthetic.json --steps 8");
  ASSERT_EQ(first.exitCode, 0) << first.output;
  ASSERT_TRUE(fs::exists(compiled / "serialized_graph.json"));
  const auto second = runCommand(autoReport(rerun) + ipusimBinary() + " run --graph " +
                                 quote((compiled / "serialized_graph.json").string()) + " --entry train --runs 2");
  ASSERT_EQ(second.exitCode, 0) << second.output;
  const std::string a = deviceCycles(compiled / "profile.pop"), b = deviceCycles(rerun / "profile.pop");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

// `compile -o` writes the executable element by element (ir::writeJson), within
// the bound `run --graph` reads, and `run --graph` runs what it wrote.
TEST(CompilerOutputs, CompileOutputIsStreamedAndRunsWithRunGraph) {
  ScratchDir dir("compile-streamed");
  const fs::path graph = dir.path() / "graph.json";
  const auto compiled = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + ipusimBinary() +
                                   " compile workloads/small_synthetic.json -o " + quote(graph.string()));
  ASSERT_EQ(compiled.exitCode, 0) << compiled.output;
  std::ifstream in(graph);
  const nlohmann::json j = nlohmann::json::parse(in);
  std::size_t lines = 0;
  std::ifstream text(graph);
  for (std::string line; std::getline(text, line);) ++lines;
  // One line a tensor, compute set, stream, program and entry point, plus the header and brackets.
  EXPECT_EQ(lines, 2 + 2 * 5 + j["tensors"].size() + j["computeSets"].size() + j["streams"].size() +
                       j["programs"].size() + j["entryPoints"].size() - 1);
  const auto ran = runCommand(ipusimBinary() + " run --graph " + quote(graph.string()) + " --entry train --runs 1");
  EXPECT_EQ(ran.exitCode, 0) << ran.output;
}

// The bundled tutorial model with a first layer far too big for 4 tiles.
fs::path writeTooBigWorkload(const fs::path& dir) {
  std::ifstream in(sourcePath("workloads/mnist_with_feeds.json"));
  nlohmann::json w = nlohmann::json::parse(in);
  w["name"] = "too_big";
  w["model"]["layers"][1]["units"] = 4096;
  w["ipu"]["tiles"] = 4;
  w["dataset"]["format"] = "synthetic";
  const fs::path path = dir / "too_big.json";
  std::ofstream(path) << w.dump(2);
  return path;
}

TEST(CompilerOutputs, AWorkloadThatDoesNotFitIsACompileErrorNamingTheTile) {
  ScratchDir dir("oom-error");
  const auto r = runCommand(autoReport(dir.path() / "out") + ipusimBinary() + " run " +
                            quote(writeTooBigWorkload(dir.path()).string()) + " --steps 10");
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("tile"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("capacity"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "profile.pop"));
}

TEST(CompilerOutputs, AllowOutOfMemoryGivesAProfileShowingTheOverFullTiles) {
  ScratchDir dir("oom-allowed");
  const auto r = runCommand(autoReport(dir.path() / "out", ",\"debug.allowOutOfMemory\":\"true\"") + ipusimBinary() +
                            " run " + quote(writeTooBigWorkload(dir.path()).string()) + " --steps 10 --synthetic-data");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string over = sql(dir.path() / "out" / "profile.pop",
                               "SELECT count(*) FROM tile_memory_peak "
                               "WHERE peak_bytes > CAST((SELECT value FROM meta WHERE key = 'tile_memory_bytes') AS INTEGER)");
  EXPECT_GT(std::stoi(over), 0) << over;
  const auto report = runCommand(ipusimBinary() + " report " + quote((dir.path() / "out").string()));
  EXPECT_EQ(report.exitCode, 0) << report.output;
  EXPECT_NE(report.output.find("over capacity"), std::string::npos) << report.output;
}

TEST(CompilerOutputs, ExportOfARealProfileHoldsEverySliceNestedPerTrack) {
  ScratchDir dir("export");
  const auto run = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + autoReport(dir.path()) + ipusimBinary() +
                              " run workloads/mnist_with_feeds.json --steps 20 --synthetic-data");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const fs::path trace = dir.path() / "trace.json";
  const auto exported = runCommand(ipusimBinary() + " export " + quote(dir.str()) + " -o " + quote(trace.string()));
  ASSERT_EQ(exported.exitCode, 0) << exported.output;
  std::ifstream in(trace);
  const nlohmann::json j = nlohmann::json::parse(in);
  const auto& events = j.is_array() ? j : j.at("traceEvents");
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> byThread;
  std::size_t complete = 0, instants = 0;
  for (const auto& e : events) {
    instants += e.at("ph") == "I";  // zero-cycle slices
    if (e.at("ph") == "X") {
      ++complete;
      byThread[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back(
          {e.at("ts").get<double>(), e.at("ts").get<double>() + e.at("dur").get<double>()});
    }
  }
  EXPECT_EQ(complete + instants, std::stoull(sql(dir.path() / "profile.pop", "SELECT count(*) FROM slices")));
  EXPECT_EQ(instants, std::stoull(sql(dir.path() / "profile.pop", "SELECT count(*) FROM slices WHERE dur = 0")));
  // Properly nested per track in double arithmetic, exactly: slices of one
  // thread never partly overlap.
  for (auto& [thread, spans] : byThread) {
    std::sort(spans.begin(), spans.end(), [](auto& a, auto& b) { return a.first < b.first || (a.first == b.first && a.second > b.second); });
    std::vector<double> open;
    for (const auto& [begin, end] : spans) {
      while (!open.empty() && open.back() <= begin) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(end, open.back()) << "partly overlapping slices on thread " << thread.second;
      }
      open.push_back(end);
    }
  }
}

}  // namespace
}  // namespace ipusim::test::test_compiler_outputs
