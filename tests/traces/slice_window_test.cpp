// ProfileReader::slices(track, from, to): the slices overlapping [from, to),
// found through the (track_id, ts) index with a look-back of the track's
// longest slice, never by scanning the track.
#include "scratch_directory.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>

namespace ipusim::traces::slice_window_test {
namespace {

using testing::ScratchDirectory;

std::vector<std::string> names(const std::vector<SliceRow>& slices) {
  std::vector<std::string> result;
  for (const auto& slice : slices) result.push_back(slice.name);
  return result;
}

class SliceWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    ProfileWriter writer(dir_.file("profile.pop"));
    track_ = writer.addTrack(TrackRow{0, -1, "engine", "Engine", -1, -1, 0});
    other_ = writer.addTrack(TrackRow{0, -1, "bsp", "BSP", 0, -1, 1});
    auto add = [&](std::int64_t track, std::int64_t ts, std::int64_t dur, const char* name) {
      writer.addSlice(SliceRow{0, track, 0, ts, dur, name, "step", 0, -1, -1, -1, -1});
    };
    add(track_, 0, 10'000, "long");       // starts long before the window, covers it
    add(track_, 100, 50, "before");       // ends before the window
    add(track_, 950, 50, "ends-at-from"); // [950, 1000): touches from, does not overlap
    add(track_, 990, 20, "straddles-from");
    add(track_, 1000, 0, "instant-at-from");
    add(track_, 1500, 10, "inside");
    add(track_, 1990, 100, "straddles-to");
    add(track_, 2000, 5, "starts-at-to");
    add(track_, 5000, 5, "after");
    add(other_, 1500, 10, "other-track");
    writer.commit();
  }

  ScratchDirectory dir_;
  std::int64_t track_ = 0, other_ = 0;
};

TEST_F(SliceWindow, ReturnsExactlyTheOverlappingSlicesInTimeOrder) {
  ProfileReader reader(dir_.file("profile.pop"));
  EXPECT_EQ(names(reader.slices(track_, 1000, 2000)),
            (std::vector<std::string>{"long", "straddles-from", "instant-at-from", "inside",
                                      "straddles-to"}));
}

TEST_F(SliceWindow, WindowInsideOneLongSlice) {
  ProfileReader reader(dir_.file("profile.pop"));
  EXPECT_EQ(names(reader.slices(track_, 3000, 4000)), std::vector<std::string>{"long"});
  EXPECT_EQ(names(reader.slices(track_, 10'000, 20'000)), std::vector<std::string>{});
  EXPECT_EQ(names(reader.slices(track_, 9'999, 10'000)), std::vector<std::string>{"long"});
}

TEST_F(SliceWindow, EmptyOrInvertedWindowsAndUnknownTracksGiveNothing) {
  ProfileReader reader(dir_.file("profile.pop"));
  EXPECT_TRUE(reader.slices(track_, 1500, 1500).empty());
  EXPECT_TRUE(reader.slices(track_, 2000, 1000).empty());
  EXPECT_TRUE(reader.slices(999, 0, 100'000).empty());
  EXPECT_EQ(names(reader.slices(other_, 0, 100'000)), std::vector<std::string>{"other-track"});
}

TEST_F(SliceWindow, RepeatedQueriesReuseTheStatement) {
  ProfileReader reader(dir_.file("profile.pop"));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(reader.slices(track_, 1500, 1501).size(), 2u);  // long, inside
    EXPECT_EQ(reader.slices(track_, 4999, 5001).size(), 2u);  // long, after
  }
}

TEST_F(SliceWindow, QueryPlanSearchesTheTrackTimeIndexWithoutSorting) {
  ProfileReader reader(dir_.file("profile.pop"));
  const char* sql =
      "EXPLAIN QUERY PLAN SELECT id FROM slices WHERE track_id = ?1 AND ts >= ?2 AND ts < ?3 "
      "AND (ts >= ?4 OR ts + dur > ?4) ORDER BY ts, depth, id";
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(reader.db(), sql, -1, &stmt, nullptr), SQLITE_OK);
  std::string plan;
  while (sqlite3_step(stmt) == SQLITE_ROW)
    plan += reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3)) + std::string("\n");
  sqlite3_finalize(stmt);
  EXPECT_NE(plan.find("SEARCH slices USING INDEX slices_by_track_ts (track_id=? AND ts>? AND ts<?)"),
            std::string::npos)
      << plan;
  // Only slices with equal ts are sorted (by depth, id), group by group: no
  // sort of the whole result.
  EXPECT_EQ(plan.find("USE TEMP B-TREE FOR ORDER BY"), std::string::npos) << plan;
}

// A profiler knows a parent's duration only when it ends, so it may write the
// children first; readers still get the parent before its children.
TEST(SliceOrder, EqualStartsAreOrderedByDepthThenId) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter writer(path);
    const auto track = writer.addTrack(TrackRow{0, -1, "engine", "Engine", -1, -1, 0});
    writer.addSlice(SliceRow{0, track, 0, 100, 10, "step 0", "step", 1, -1, -1, -1, -1});
    writer.addSlice(SliceRow{0, track, 0, 110, 10, "step 1", "step", 1, -1, -1, -1, -1});
    writer.addSlice(SliceRow{0, track, 0, 100, 20, "run", "engine_run", 0, -1, -1, -1, -1});
    writer.addSlice(SliceRow{0, track, 0, 100, 5, "sub", "program", 2, -1, -1, -1, -1});
    writer.commit();
  }
  ProfileReader reader(path);
  const std::vector<std::string> expected{"run", "step 0", "sub", "step 1"};
  EXPECT_EQ(names(reader.slices(1, 0, 1000)), expected);
  std::vector<SliceRow> streamed;
  reader.forEachSlice(1, [&](const SliceRow& row) { streamed.push_back(row); });
  EXPECT_EQ(names(streamed), expected);
}

std::int64_t queryInt(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_ROW) << sql;
  const std::int64_t value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return value;
}

// One slice spanning the whole track (a Repeat around every step) must not
// turn every windowed query into a scan of the track: it is kept aside in
// long_slices and the look-back stays the length of the short slices.
TEST(SliceWindowLongSlices, ASliceSpanningTheTrackIsKeptAside) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter writer(path);
    const auto track = writer.addTrack(TrackRow{0, -1, "program", "programs", 0, -1, 0});
    writer.addSlice(SliceRow{0, track, 0, 0, 50'000, "Repeat", "program", 0, -1, -1, -1, -1});
    for (int i = 0; i < 5000; ++i)
      writer.addSlice(SliceRow{0, track, 0, i * 10, 10, "step", "program", 1, 1, -1, -1, -1});
    writer.commit();
  }
  ProfileReader reader(path);
  EXPECT_EQ(queryInt(reader.db(), "SELECT look_back FROM slice_track_stats WHERE track_id = 1"), 10);
  EXPECT_EQ(queryInt(reader.db(), "SELECT max_dur FROM slice_track_stats WHERE track_id = 1"), 50'000);
  EXPECT_EQ(queryInt(reader.db(), "SELECT count(*) FROM long_slices WHERE track_id = 1 AND slice_id = 1"), 1);
  EXPECT_EQ(queryInt(reader.db(), "SELECT count(*) FROM long_slices"), 1);

  const auto window = reader.slices(1, 25'005, 25'030);
  ASSERT_EQ(window.size(), 4u);
  EXPECT_EQ(window[0].name, "Repeat");
  EXPECT_EQ(window[1].ts, 25'000);
  EXPECT_EQ(window[2].ts, 25'010);
  EXPECT_EQ(window[3].ts, 25'020);
  EXPECT_TRUE(reader.slices(1, 50'000, 60'000).empty());
}

// Against a brute-force filter over every slice: random overlapping slices
// with heavy-tailed durations, more than TrackSliceStats keeps aside, and
// random windows (some before, some after the data).
TEST(SliceWindowLongSlices, MatchesABruteForceFilterOnRandomSlices) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  std::mt19937_64 random(20240611);
  {
    ProfileWriter writer(path);
    const auto track = writer.addTrack(TrackRow{0, -1, "host", "host", -1, -1, 0});
    writer.addTrack(TrackRow{0, -1, "host", "other", -1, -1, 1});
    std::uniform_int_distribution<std::int64_t> start(0, 1'000'000);
    std::exponential_distribution<double> length(1.0 / 200.0);
    for (int i = 0; i < 6000; ++i) {
      const std::int64_t dur = i % 97 == 0 ? static_cast<std::int64_t>(length(random) * 500)
                                           : static_cast<std::int64_t>(length(random));
      writer.addSlice(SliceRow{0, track, 0, start(random), dur, "s" + std::to_string(i), "host",
                               0, -1, -1, -1, -1});
      writer.addSlice(SliceRow{0, 2, 0, start(random), 5, "noise", "host", 0, -1, -1, -1, -1});
    }
    writer.commit();
  }
  ProfileReader reader(path);
  std::vector<SliceRow> all;
  reader.forEachSlice(1, [&](const SliceRow& row) { all.push_back(row); });
  ASSERT_EQ(all.size(), 6000u);
  ASSERT_GT(queryInt(reader.db(), "SELECT count(*) FROM long_slices WHERE track_id = 1"), 0);

  std::uniform_int_distribution<std::int64_t> edge(-10'000, 1'300'000);
  std::uniform_int_distribution<std::int64_t> width(0, 20'000);
  for (int q = 0; q < 300; ++q) {
    const std::int64_t from = edge(random);
    const std::int64_t to = from + width(random);
    std::vector<std::int64_t> expected;
    for (const auto& row : all)
      if (row.ts < to && (row.ts >= from || row.ts + row.dur > from) && from < to) expected.push_back(row.id);
    std::vector<std::int64_t> actual;
    for (const auto& row : reader.slices(1, from, to)) actual.push_back(row.id);
    ASSERT_EQ(actual, expected) << "window [" << from << ", " << to << ")";
  }
}

}  // namespace
}  // namespace ipusim::traces::slice_window_test
