// Range statistics equal plain SQL sums over the same range, follow the
// command-line analyses' definitions (exclusive buckets, host wait = Begin,
// overlap = transfer cycles under compute) and split host bytes by the
// declared stream directions.
#include "profiler/analysis/device_activity.hpp"
#include "profiler/analysis/range_stats.hpp"
#include "sample_profile.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

namespace ipusim::viewer::range_stats_test {
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
  EXPECT_EQ(ipu.ipuLink, 0);
  EXPECT_EQ(ipu.compute + ipu.exchange + ipu.ipuLink + ipu.sync + ipu.streamCopy + ipu.idle, s.cycles);
  EXPECT_EQ(s.hostLinkBytes(), 5120);
  EXPECT_EQ(s.bytesToDevice, 5120);  // "infeed": to the device
  EXPECT_EQ(s.bytesToHost, 0);
  EXPECT_EQ(s.bytesByStream.at("infeed").bytes, 5120);
  EXPECT_FALSE(s.bytesByStream.at("infeed").toHost);
  // Host wait: Begin [0,300) + [600,640); transfer: Mid [300,380) + [640,690),
  // none of it under compute ([400,500), [700,900)).
  EXPECT_EQ(s.hostWaitCycles, 340);
  EXPECT_EQ(s.hostTransferCycles, 130);
  EXPECT_EQ(s.transferOverlapCycles, 0);
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
    EXPECT_EQ(ipu.compute + ipu.exchange + ipu.ipuLink + ipu.sync + ipu.streamCopy + ipu.idle, to - from);
    EXPECT_EQ(s.hostWaitCycles, sqlClippedSum(db, from, to, "t.kind = 'stream' AND s.category = 'stream_copy_begin'"));
    EXPECT_EQ(s.hostTransferCycles, sqlClippedSum(db, from, to, "t.kind = 'stream' AND s.category = 'stream_copy_mid'"));
    EXPECT_EQ(s.hostLinkBytes(),
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

// Two streams, one declared DeviceToHost in meta (its name does not say so),
// a transfer under compute and copies under compute: the priority buckets,
// the overlap and the byte split, by hand.
class StreamDirectionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = scratch_.file("directions.pop");
    traces::ProfileWriter w(path_);
    w.setMeta("num_ipus", "1");
    w.setMeta("tiles_per_ipu", "4");
    w.setMeta("stream_directions", R"({"infeed": "HostToDevice", "weights_out": "DeviceToHost"})");
    const auto stream = w.addTrack({0, -1, "stream", "StreamCopy", 0, -1, 0});
    const auto bsp = w.addTrack({0, -1, "bsp", "IPU 0 BSP", 0, -1, 1});
    auto add = [&](std::int64_t track, std::int64_t ts, std::int64_t dur, const char* name, const char* category,
                   std::int64_t depth, std::int64_t parent = -1, std::int64_t bytes = -1) {
      return w.addSlice({0, track, 0, ts, dur, name, category, depth, parent, -1, -1, bytes});
    };
    add(bsp, 100, 200, "matmul", "compute", 0);
    const auto in = add(stream, 0, 250, "StreamCopy infeed", "stream_copy", 0);
    add(stream, 0, 150, "Begin", "stream_copy_begin", 1, in);
    add(stream, 150, 80, "Mid", "stream_copy_mid", 1, in, 1000);
    add(stream, 230, 20, "End", "stream_copy_end", 1, in);
    const auto out = add(stream, 280, 120, "StreamCopy weights_out", "stream_copy", 0);
    add(stream, 280, 20, "Begin", "stream_copy_begin", 1, out);
    add(stream, 300, 80, "Mid", "stream_copy_mid", 1, out, 300);
    add(stream, 380, 20, "End", "stream_copy_end", 1, out);
    w.commit();
  }
  testing::ScratchDirectory scratch_;
  std::string path_;
};

TEST_F(StreamDirectionsTest, WholeRangeByHand) {
  traces::ProfileReader reader(path_);
  const auto s = computeRangeStats(reader, 0, 400);
  ASSERT_EQ(s.ipus.size(), 1u);
  // Compute [100,300) wins over the copies under it: copy [0,100) + [300,400).
  EXPECT_EQ(s.ipus[0].compute, 200);
  EXPECT_EQ(s.ipus[0].streamCopy, 200);
  EXPECT_EQ(s.ipus[0].idle, 0);
  EXPECT_EQ(s.hostWaitCycles, 170);       // [0,150) + [280,300)
  EXPECT_EQ(s.hostTransferCycles, 160);   // [150,230) + [300,380)
  EXPECT_EQ(s.transferOverlapCycles, 80); // [150,230) under compute
  EXPECT_DOUBLE_EQ(s.computeIoOverlap(), 0.5);
  EXPECT_EQ(s.bytesToDevice, 1000);
  EXPECT_EQ(s.bytesToHost, 300);
  EXPECT_EQ(s.bytesByStream.at("infeed").bytes, 1000);
  EXPECT_FALSE(s.bytesByStream.at("infeed").toHost);
  EXPECT_EQ(s.bytesByStream.at("weights_out").bytes, 300);
  EXPECT_TRUE(s.bytesByStream.at("weights_out").toHost);
}

TEST_F(StreamDirectionsTest, PartialRangeClipsAndCountsMidsStartingInIt) {
  traces::ProfileReader reader(path_);
  const auto s = computeRangeStats(reader, 200, 320);
  ASSERT_EQ(s.ipus.size(), 1u);
  EXPECT_EQ(s.ipus[0].compute, 100);
  EXPECT_EQ(s.ipus[0].streamCopy, 20);  // [300,320)
  EXPECT_EQ(s.ipus[0].idle, 0);
  EXPECT_EQ(s.hostWaitCycles, 20);
  EXPECT_EQ(s.hostTransferCycles, 50);  // [200,230) + [300,320)
  EXPECT_EQ(s.transferOverlapCycles, 30);
  EXPECT_EQ(s.bytesToDevice, 0);        // the infeed Mid started at 150
  EXPECT_EQ(s.bytesToHost, 300);
  // The same figures as the command-line analyses over that window.
  profiler::analysis::IntervalSet window;
  window.add(200, 320);
  const auto cli = profiler::analysis::measureDeviceActivity(reader, window, 1);
  EXPECT_EQ(cli.perIpu[0].compute, s.ipus[0].compute);
  EXPECT_EQ(cli.perIpu[0].streamCopy, s.ipus[0].streamCopy);
  EXPECT_EQ(cli.hostWaitCycles, s.hostWaitCycles);
  EXPECT_EQ(cli.bytesToHost, s.bytesToHost);
}

TEST_F(StreamDirectionsTest, AMalformedDirectionIsRefusedWhenTheProfileOpens) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '{\"infeed\": \"Sideways\"}' WHERE key = 'stream_directions'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  // Check 2 of every reader (profile_rules.json), before any analysis: the
  // viewer, which opens with the whole-file checks deferred, refuses it too.
  try {
    traces::ProfileReader reader(path_, traces::ProfileReader::Checks::WholeFileDeferred);
    FAIL() << "expected a ProfileError";
  } catch (const traces::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find(path_ + ": meta 'stream_directions' gives 'infeed' the value \"Sideways\", "
                                         "expected a JSON object whose values are \"HostToDevice\" or \"DeviceToHost\""),
              std::string::npos)
        << e.what();
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
}  // namespace ipusim::viewer::range_stats_test
