// ipusim report: the numbers of a profile with known slices.
#include "profiler/analysis/range_stats.hpp"
#include "profiler/analysis/report.hpp"
#include "tests/profiler/test_analysis_profile.hpp"
#include "traces/profile_reader.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace test_analysis_report {

using namespace ipusim;
using namespace ipusim::profiler::analysis;

namespace {

ProfileReport knownReport() {
  const std::string path = testing_profiles::temporaryPath("report.pop");
  testing_profiles::writeKnownProfile(path);
  const traces::ProfileReader reader(path);
  ReportOptions options;
  options.fullestTiles = 2;
  return buildReport(reader, options);
}

}  // namespace

TEST(AnalysisReport, TargetProgramsAndRuns) {
  const auto r = knownReport();
  EXPECT_EQ(r.target.arch, "ipu2");
  EXPECT_EQ(r.target.numIpus, 1);
  EXPECT_EQ(r.target.tilesPerIpu, 4);
  EXPECT_DOUBLE_EQ(r.target.clockHz, 1e9);
  EXPECT_EQ(r.programs.programs, 5);
  EXPECT_EQ(r.programs.maxDepth, 2);
  EXPECT_EQ(r.programs.byKind.at("Sequence"), 2);
  EXPECT_EQ(r.programs.byKind.at("Execute"), 1);
  ASSERT_EQ(r.programs.roots.size(), 2u);
  EXPECT_EQ(r.programs.roots[0].name, "main");
  EXPECT_EQ(r.programs.roots[0].steps, 4);
  EXPECT_EQ(r.programs.roots[1].steps, 1);
  EXPECT_EQ(r.runs.runs, 3);
  EXPECT_EQ(r.runs.capturedRuns, 2);
  EXPECT_EQ(r.runs.steps, 6);
  EXPECT_EQ(r.runs.spanCycles(), 3000);
  EXPECT_EQ(r.runs.runCycles, 2800);
  EXPECT_EQ(r.runs.capturedCycles, 1800);
}

TEST(AnalysisReport, CyclesByPhaseOverCapturedRunsSumToTheirLength) {
  const auto r = knownReport();
  const auto& a = r.captured;
  EXPECT_EQ(a.windowCycles, 1800);
  ASSERT_EQ(a.perIpu.size(), 1u);
  const PhaseCycles& c = a.perIpu[0];
  EXPECT_EQ(c.compute, 950);
  EXPECT_EQ(c.exchange, 100);
  EXPECT_EQ(c.sync, 100);
  // [0,300) + [900,1000) + [1200,1300): the copy under compute [1300,1400) counts as compute.
  EXPECT_EQ(c.streamCopy, 500);
  EXPECT_EQ(c.idle, 150);
  EXPECT_EQ(c.total(), 1800);
  EXPECT_EQ(a.hostWaitCycles, 260);
  EXPECT_EQ(a.hostTransferCycles, 310);
  EXPECT_EQ(a.transferOverlapCycles, 100);
  EXPECT_DOUBLE_EQ(a.overlapFraction(), 100.0 / 310.0);
  EXPECT_EQ(a.bytesToDevice, 800);
  EXPECT_EQ(a.bytesToHost, 100);
}

TEST(AnalysisReport, TileMemoryAndLoss) {
  const auto r = knownReport();
  const auto& m = r.memory;
  EXPECT_EQ(m.tiles, 4);
  EXPECT_EQ(m.capacityBytes, 1000);
  EXPECT_EQ(m.totalBytes, 1800);
  EXPECT_EQ(m.maxBytes, 1200);
  EXPECT_DOUBLE_EQ(m.meanBytes, 450.0);
  EXPECT_EQ(m.tilesOverCapacity, 1);
  EXPECT_EQ(m.bytesByCategory.at("weights"), 1500);
  ASSERT_EQ(m.fullest.size(), 2u);
  EXPECT_EQ(m.fullest[0].tile, 1);
  EXPECT_EQ(m.fullest[1].tile, 0);
  EXPECT_EQ(m.fullest[1].bytes, 500);
  ASSERT_TRUE(r.loss.has_value());
  EXPECT_EQ(r.loss->samples, 4);
  EXPECT_DOUBLE_EQ(r.loss->first, 2.5);
  EXPECT_DOUBLE_EQ(r.loss->last, 1.0);
  EXPECT_DOUBLE_EQ(r.loss->min, 0.8);
  EXPECT_EQ(r.loss->minTs, 1500);
}

TEST(AnalysisReport, JsonAndTextCarryTheNumbers) {
  const auto r = knownReport();
  const auto j = reportToJson(r);
  EXPECT_EQ(j["runs"]["count"], 3);
  EXPECT_EQ(j["runs"]["captured"], 2);
  EXPECT_DOUBLE_EQ(j["runs"]["span_seconds"].get<double>(), 3e-6);
  EXPECT_EQ(j["captured"]["cycles_by_phase"][0]["compute"], 950);
  EXPECT_EQ(j["captured"]["cycles_by_phase"][0]["idle"], 150);
  EXPECT_EQ(j["tile_memory"]["max_bytes"], 1200);
  EXPECT_EQ(j["tile_memory"]["fullest"][0]["tile"], 1);
  EXPECT_DOUBLE_EQ(j["loss"]["min"].get<double>(), 0.8);
  std::ostringstream text;
  printReport(r, text);
  EXPECT_NE(text.str().find("3 Engine::run calls, 2 captured"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("950 52.8%"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("1 tile(s) over capacity"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("min 0.8"), std::string::npos) << text.str();
}

// Where the definitions coincide (no copy under compute), the report's
// per-IPU cycles equal the viewer's range statistics over the same window.
TEST(AnalysisReport, AgreesWithRangeStatisticsOnRunZero) {
  const std::string path = testing_profiles::temporaryPath("agree.pop");
  testing_profiles::writeKnownProfile(path);
  const traces::ProfileReader reader(path);
  IntervalSet window;
  window.add(0, 1000);
  const auto mine = measureDeviceActivity(reader, window, 1);
  const auto theirs = profiler::computeRangeStats(reader, 0, 1000);
  ASSERT_EQ(theirs.ipus.size(), 1u);
  EXPECT_EQ(mine.perIpu[0].compute, theirs.ipus[0].compute);
  EXPECT_EQ(mine.perIpu[0].exchange, theirs.ipus[0].exchange);
  EXPECT_EQ(mine.perIpu[0].sync, theirs.ipus[0].sync);
  EXPECT_EQ(mine.perIpu[0].streamCopy, theirs.ipus[0].streamCopy);
  EXPECT_EQ(mine.perIpu[0].idle, theirs.ipus[0].idle);
  EXPECT_EQ(mine.perIpu[0].compute, 450);
  EXPECT_EQ(mine.perIpu[0].streamCopy, 400);
}

TEST(AnalysisReport, MissingProfileIsAProfileErrorNamingIt) {
  const std::string path = testing_profiles::temporaryPath("absent.pop");
  try {
    traces::ProfileReader reader(path);
    FAIL() << "opened a missing profile";
  } catch (const traces::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.pop"), std::string::npos) << e.what();
  }
}

TEST(AnalysisReport, MalformedClockIsNamed) {
  const std::string path = testing_profiles::temporaryPath("badclock.pop");
  {
    traces::ProfileWriter w(path);
    w.setMeta("clock_hz", "fast");
    w.commit();
  }
  try {
    const traces::ProfileReader reader(path);  // the meta rules are checked on open (traces/profile_rules.hpp)
    buildReport(reader);
    FAIL() << "accepted clock_hz=fast";
  } catch (const traces::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("'clock_hz' is 'fast', expected a number from 1000000 to 1000000000000"), std::string::npos)
        << e.what();
  }
}

// With tile_memory_peak rows, a tile's figure is its peak (the compiler's),
// not the sum of its categories, which is only the breakdown.
TEST(AnalysisReport, TileMemoryFigureIsThePeakWhenTheProfileHasOne) {
  using ipusim::traces::TileMemoryPeakRow;
  using ipusim::traces::TileMemoryRow;
  // Tile 0: weights 300 always live, activations 200 + temporaries 250 sharing
  // bytes: peak 600 (not 750). Tile 1: 1200 of weights, peak 1200.
  const std::vector<TileMemoryRow> rows = {{0, 0, "weights", true, 300},
                                           {0, 0, "activations", false, 200},
                                           {0, 0, "temporaries", false, 250},
                                           {0, 1, "weights", true, 1200}};
  const std::vector<TileMemoryPeakRow> peaks = {{0, 0, 600, 304, 296}, {0, 1, 1200, 1200, 0}};
  const auto m = summarizeTileMemory(rows, peaks, 4, 1000, 2);
  EXPECT_TRUE(m.fromPeaks);
  EXPECT_EQ(m.maxBytes, 1200);
  EXPECT_EQ(m.totalBytes, 1800);
  EXPECT_DOUBLE_EQ(m.meanBytes, 450.0);
  EXPECT_EQ(m.tilesOverCapacity, 1);
  EXPECT_EQ(m.bytesByCategory.at("weights"), 1500);
  EXPECT_EQ(m.bytesByCategory.at("temporaries"), 250);
  ASSERT_EQ(m.fullest.size(), 2u);
  EXPECT_EQ(m.fullest[1].tile, 0);
  EXPECT_EQ(m.fullest[1].bytes, 600);
  EXPECT_EQ(m.fullest[1].alwaysLiveBytes, 304);
  EXPECT_EQ(m.fullest[1].notAlwaysLivePeakBytes, 296);
  // Without peaks (older profiles) the tile's rows are summed.
  const auto sums = summarizeTileMemory(rows, {}, 4, 1000, 2);
  EXPECT_FALSE(sums.fromPeaks);
  EXPECT_EQ(sums.fullest[1].bytes, 750);
}

}  // namespace test_analysis_report
