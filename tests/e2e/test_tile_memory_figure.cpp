// One memory figure: for the tutorial workload, the per-tile peak the profile
// stores (tile_memory_peak) and `ipusim report --json` prints are exactly
// ir::tileMemoryUsage of the compiled executable, and its maximum is the
// compiler's own figure (CompileReport::maxTileBytes).
#include "cli_helpers.hpp"

#include "model/ir/tile_memory_usage.hpp"
#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"
#include "traces/profile_reader.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace ipusim::test::test_tile_memory_figure {
namespace {

// `codeMemory`: with compile.code_memory, the code tensors in every figure too.
void expectOneFigure(bool codeMemory) {
  ScratchDir dir("memory-figure");
  const std::string workloadPath = sourcePath("workloads/mnist_with_feeds.json");
  const auto r = runCommand("POPLAR_ENGINE_OPTIONS=" +
                            quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}") +
                            " " + ipusimBinary() + " run " + quote(workloadPath) + " --steps 20 --synthetic-data" +
                            (codeMemory ? " --workload-set compile.code_memory=true" : ""));
  ASSERT_EQ(r.exitCode, 0) << r.output;

  scheduler::Workload workload = scheduler::loadWorkload(workloadPath);
  workload.training.steps = 20;
  workload.codeMemory = codeMemory;
  const scheduler::CompiledWorkload compiled = scheduler::compile(workload);
  EXPECT_EQ(codeMemory, compiled.report.codeBytes.total() > 0);
  const auto usage = ir::tileMemoryUsage(compiled.exe.tensors, compiled.target.totalTiles());
  ASSERT_FALSE(usage.empty());

  const traces::ProfileReader reader((dir.path() / "profile.pop").string());
  const auto peaks = reader.tileMemoryPeaks();
  ASSERT_EQ(peaks.size(), usage.size());
  std::uint64_t maxPeak = 0;
  for (std::size_t i = 0; i < usage.size(); ++i) {
    EXPECT_EQ(std::uint64_t(peaks[i].tile), usage[i].tile);
    EXPECT_EQ(std::uint64_t(peaks[i].peakBytes), usage[i].peakBytes) << "tile " << usage[i].tile;
    EXPECT_EQ(std::uint64_t(peaks[i].alwaysLiveBytes), usage[i].alwaysLiveBytes) << "tile " << usage[i].tile;
    maxPeak = std::max(maxPeak, usage[i].peakBytes);
  }
  EXPECT_EQ(maxPeak, compiled.report.maxTileBytes);

  const auto report = runCommand(ipusimBinary() + " report --json " + quote(dir.str()));
  ASSERT_EQ(report.exitCode, 0) << report.output;
  const auto j = nlohmann::json::parse(report.output);
  EXPECT_EQ(j["tile_memory"]["figure"], "peak");
  EXPECT_EQ(j["tile_memory"]["max_bytes"].get<std::uint64_t>(), maxPeak);
  EXPECT_EQ(j["tile_memory"]["fullest"][0]["bytes"].get<std::uint64_t>(), maxPeak);
}

TEST(TileMemoryFigure, ProfileReportAndCompilerAgreeForTheTutorial) { expectOneFigure(false); }

TEST(TileMemoryFigure, ProfileReportAndCompilerAgreeWithCodeMemory) { expectOneFigure(true); }

// `compile --json` gives the code's bytes with compile.code_memory, null without.
TEST(TileMemoryFigure, CompileJsonGivesTheCodeBytes) {
  ScratchDir dir("memory-figure-json");
  nlohmann::json w = nlohmann::json::parse(std::ifstream(sourcePath("workloads/small_synthetic.json")));
  for (bool code : {false, true}) {
    w["compile"]["code_memory"] = code;
    const std::string path = (dir.path() / "w.json").string();
    std::ofstream(path) << w.dump();
    const auto r = runCommand(ipusimBinary() + " compile --json " + quote(path));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output);
    if (!code) {
      EXPECT_TRUE(j["code_bytes"].is_null());
      continue;
    }
    const auto& b = j["code_bytes"];
    for (const char* key : {"vertex_code", "vertex_state", "control_code", "exchange_code"})
      EXPECT_GT(b[key].get<std::uint64_t>(), 0u) << key;
  }
}

}  // namespace
}  // namespace ipusim::test::test_tile_memory_figure
