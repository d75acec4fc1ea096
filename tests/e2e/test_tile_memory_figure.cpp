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

#include <map>

namespace ipusim::test::test_tile_memory_figure {
namespace {

TEST(TileMemoryFigure, ProfileReportAndCompilerAgreeForTheTutorial) {
  ScratchDir dir("memory-figure");
  const std::string workloadPath = sourcePath("workloads/mnist_with_feeds.json");
  const auto r = runCommand("POPLAR_ENGINE_OPTIONS=" +
                            quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}") +
                            " " + ipusimBinary() + " run " + quote(workloadPath) + " --steps 20 --synthetic-data");
  ASSERT_EQ(r.exitCode, 0) << r.output;

  scheduler::Workload workload = scheduler::loadWorkload(workloadPath);
  workload.training.steps = 20;
  const scheduler::CompiledWorkload compiled = scheduler::compile(workload);
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

}  // namespace
}  // namespace ipusim::test::test_tile_memory_figure
