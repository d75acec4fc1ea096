// Range statistics equal plain SQL sums over the same range.
#include "profiler/analysis/range_stats.hpp"
#include "sample_profile.hpp"
#include "traces/profile_reader.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

namespace ipusim::viewer {
namespace {

using profiler::computeRangeStats;

// SUM of slice cycles clipped to [from, to), for slices matching `where`.
std::int64_t sqlClippedSum(sqlite3* db, std::int64_t from, std::int64_t to, const std::string& where) {
  const std::string sql =
      "SELECT COALESCE(SUM(MIN(s.ts + s.dur, " + std::to_string(to) + ") - MAX(s.ts, " + std::to_string(from) +
      ")), 0) FROM slices s JOIN tracks t ON t.id = s.track_id WHERE s.ts < " + std::to_string(to) +
      " AND s.ts + s.dur > " + std::to_string(from) + " AND " + where;
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  const std::int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

std::int64_t sqlScalar(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  const std::int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

class RangeStatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = scratch_.file("profile.pop");
    testing::writeSampleProfile(path_);
  }
  testing::ScratchDirectory scratch_;
  std::string path_;
};

TEST_F(RangeStatsTest, WholeRunMatchesTheHandCountedCycles) {
  traces::ProfileReader reader(path_);
  const auto s = computeRangeStats(reader, 0, 1000);
  EXPECT_EQ(s.cycles, 1000);
  ASSERT_EQ(s.ipus.size(), 1u);
  const auto& ipu = s.ipus[0];
  EXPECT_EQ(ipu.compute, 300);
  EXPECT_EQ(ipu.exchange, 50);
  EXPECT_EQ(ipu.sync, 20);
  EXPECT_EQ(ipu.streamCopy, 500);
  // Busy: [0,560) and [600,910) -> 870 cycles, idle 130.
  EXPECT_EQ(ipu.idle, 130);
  EXPECT_EQ(s.hostLinkBytes, 5120);
  EXPECT_EQ(s.bytesByStream.at("infeed"), 5120);
  // IO: [0,380) u [450,720) = 650 cycles; with compute: [450,500) + [700,720) = 70.
  EXPECT_EQ(s.ioCycles, 650);
  EXPECT_EQ(s.computeIoOverlapCycles, 70);
  // Tiles 100, 50, 0, 25: 175 / (100 x 3 working tiles), 175 / (100 x 4 tiles).
  ASSERT_TRUE(ipu.hasTileDetail);
  EXPECT_NEAR(ipu.tileBalance, 175.0 / 300.0, 1e-12);
  EXPECT_NEAR(ipu.parallelEfficiency, 175.0 / 400.0, 1e-12);
}

TEST_F(RangeStatsTest, EveryRangeEqualsPlainSqlSums) {
  traces::ProfileReader reader(path_);
  sqlite3* db = reader.db();
  const std::pair<std::int64_t, std::int64_t> ranges[] = {{0, 1000}, {350, 750}, {420, 460}, {0, 1},
                                                          {555, 705}, {950, 2000}, {300, 300}};
  for (const auto& [from, to] : ranges) {
    SCOPED_TRACE("range " + std::to_string(from) + ":" + std::to_string(to));
    const auto s = computeRangeStats(reader, from, to);
    ASSERT_EQ(s.ipus.size(), 1u);
    const auto& ipu = s.ipus[0];
    const std::int64_t compute = sqlClippedSum(db, from, to, "t.kind = 'bsp' AND s.category = 'compute'");
    const std::int64_t exchange = sqlClippedSum(db, from, to, "t.kind = 'bsp' AND s.category = 'exchange'");
    const std::int64_t sync = sqlClippedSum(db, from, to, "t.kind = 'bsp' AND s.category = 'sync'");
    // The outer StreamCopy slices cover their phases: their sum is the union.
    const std::int64_t copy = sqlClippedSum(db, from, to, "t.kind = 'stream' AND s.category = 'stream_copy'");
    EXPECT_EQ(ipu.compute, compute);
    EXPECT_EQ(ipu.exchange, exchange);
    EXPECT_EQ(ipu.sync, sync);
    EXPECT_EQ(ipu.streamCopy, copy);
    // In this profile BSP phases and stream copies never overlap.
    EXPECT_EQ(ipu.idle, (to - from) - compute - exchange - sync - copy);
    EXPECT_EQ(s.hostLinkBytes,
              sqlScalar(db, "SELECT COALESCE(SUM(bytes), 0) FROM slices WHERE category = 'stream_copy_mid' AND ts >= " +
                                std::to_string(from) + " AND ts < " + std::to_string(to)));
  }
}

TEST_F(RangeStatsTest, ABackwardRangeIsAClearError) {
  traces::ProfileReader reader(path_);
  try {
    computeRangeStats(reader, 500, 100);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("500"), std::string::npos) << e.what();
  }
}

TEST(IntervalUnion, MergesAndIntersects) {
  using profiler::Interval;
  const auto u = profiler::unionOf({{5, 10}, {0, 3}, {2, 4}, {10, 12}, {20, 20}});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].begin, 0);
  EXPECT_EQ(u[0].end, 4);
  EXPECT_EQ(u[1].begin, 5);
  EXPECT_EQ(u[1].end, 12);
  EXPECT_EQ(profiler::totalLength(u), 11);
  EXPECT_EQ(profiler::intersectionLength(u, {{3, 6}, {11, 30}}), 3);
}

}  // namespace
}  // namespace ipusim::viewer
