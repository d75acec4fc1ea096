// A profile opens into lanes in display order, with one row per depth.
#include "viewer/core/compare_summary.hpp"
#include "viewer/core/memory_summary.hpp"
#include "viewer/core/profile_session.hpp"
#include "viewer/core/recent_profiles.hpp"
#include "sample_profile.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sqlite3.h>

namespace ipusim::viewer::profile_session_test {
namespace {

class ProfileSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = scratch_.file("profile.pop");
    testing::writeSampleProfile(path_);
  }
  testing::ScratchDirectory scratch_;
  std::string path_;
};

TEST_F(ProfileSessionTest, LanesFollowTheDisplayOrder) {
  ProfileSession s(path_, /*loadInBackground=*/false);
  std::vector<std::string> kinds;
  for (const auto& l : s.lanes()) kinds.push_back(l->trackKind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"engine", "host", "stream", "program", "bsp", "counter"}));
  EXPECT_EQ(s.lanes()[2]->title, "StreamCopy: infeed (IPU 0)");
  EXPECT_DOUBLE_EQ(s.clockHz(), 1e9);
  EXPECT_EQ(s.startCycle(), 0);
  EXPECT_EQ(s.endCycle(), 1000);
  EXPECT_EQ(s.sliceCount(), 19);
}

TEST_F(ProfileSessionTest, SlicesLandOnOneRowPerDepth) {
  ProfileSession s(path_, false);
  const Lane& stream = *s.lanes()[2];
  ASSERT_TRUE(stream.isLoaded());
  ASSERT_EQ(stream.rows.size(), 2u);
  EXPECT_EQ(stream.rowDepth, (std::vector<int>{0, 1}));
  EXPECT_EQ(stream.rows[0].size(), 2u);
  EXPECT_EQ(stream.rows[1].size(), 6u);
  EXPECT_EQ(stream.strings.at(stream.rows[1].name[1]), "Mid");
  EXPECT_EQ(stream.rows[1].start[1], 300);
  EXPECT_EQ(stream.rows[1].end[1], 380);
  const Lane& loss = *s.lanes()[5];
  EXPECT_EQ(loss.counterTs, (std::vector<std::int64_t>{500, 900}));
  EXPECT_DOUBLE_EQ(loss.counterMin, 1.9);
}

TEST_F(ProfileSessionTest, OverlappingSlicesOfOneDepthGetTheirOwnRow) {
  const std::string path = scratch_.file("overlap.pop");
  {
    traces::ProfileWriter w(path);
    const auto track = w.addTrack({0, -1, "host", "loop", -1, -1, 0});
    for (auto [ts, dur] : {std::pair{0, 100}, {50, 100}, {120, 10}, {200, 5}}) {
      traces::SliceRow r;
      r.trackId = track;
      r.ts = ts;
      r.dur = dur;
      r.name = "step";
      r.category = "step";
      w.addSlice(r);
    }
    w.commit();
  }
  ProfileSession s(path, false);
  const Lane& lane = *s.lanes()[0];
  ASSERT_EQ(lane.rows.size(), 2u);
  EXPECT_EQ(lane.rows[0].start, (std::vector<std::int64_t>{0, 120, 200}));
  EXPECT_EQ(lane.rows[1].start, (std::vector<std::int64_t>{50}));
}

TEST_F(ProfileSessionTest, DetailsNameTheProgramPathAndWorkloadOrigin) {
  ProfileSession s(path_, false);
  const Lane& bsp = *s.lanes()[4];
  const auto& row = bsp.rows[0];
  auto d = s.details(bsp, row.sliceId[0], row.start[0]);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->row.name, "dense_1/matmul");
  EXPECT_EQ(d->row.dur, 100);
  EXPECT_EQ(d->programPath, "Sequence main / Repeat 2 steps / Execute matmul");
  EXPECT_EQ(d->layer, "dense_1");
  EXPECT_EQ(d->op, "matmul");
  EXPECT_EQ(s.tileCycles(1, 0), (std::vector<std::uint32_t>{100, 50, 0, 25}));
}

TEST_F(ProfileSessionTest, BackgroundLoadingFillsEveryLane) {
  ProfileSession s(path_, true);
  s.waitUntilVisibleLoaded();
  EXPECT_TRUE(s.fullyLoaded());
  std::uint64_t slices = 0;
  for (const auto& l : s.lanes()) slices += l->sliceCount;
  EXPECT_EQ(slices, 19u);
}

TEST_F(ProfileSessionTest, MemorySummaryStacksCategoriesAgainstCapacity) {
  ProfileSession s(path_, false);
  const auto m = summarizeMemory(s.tileMemory(), {}, 4, 1000);  // the sample has no peaks: category sums
  ASSERT_EQ(m.tileCount(), 4u);
  EXPECT_EQ(m.total, (std::vector<std::int64_t>{200, 300, 400, 1250}));
  EXPECT_EQ(m.tilesOverCapacity, 1);
  EXPECT_EQ(m.maxTotal, 1250);
}

TEST_F(ProfileSessionTest, CompareTabulatesDeltas) {
  ProfileSession a(path_, false), b(path_, false);
  const auto rows = compareProfiles(a, b);
  ASSERT_GE(rows.size(), 6u);
  EXPECT_EQ(rows[0].metric, "Total cycles");
  EXPECT_DOUBLE_EQ(rows[0].a, 1000);
  EXPECT_DOUBLE_EQ(rows[0].delta(), 0);
  EXPECT_DOUBLE_EQ(rows[4].a, 2);  // steps per run
  const auto row = [&](const std::string& metric) {
    for (const auto& r : rows)
      if (r.metric == metric) return r;
    ADD_FAILURE() << "no row " << metric;
    return CompareRow{};
  };
  EXPECT_DOUBLE_EQ(row("IPU 0 compute").a, 0.3);
  EXPECT_DOUBLE_EQ(row("StreamCopy Begin").a, 0.34);  // Begin [0,300) + [600,640)
  // The one run [0, 1000) is captured and starts at 0: nothing outside it,
  // no host service phase, so the IPU waits for the host during the Begins.
  EXPECT_DOUBLE_EQ(row("IPU waiting for the host").a, 0.34);
  EXPECT_DOUBLE_EQ(a.hostWait().share(), 0.34);
}

// A profile that captured no run has no shares to compare: "n/a" (NaN), not
// 0.0% each (adversarial pass 23).
TEST_F(ProfileSessionTest, CompareGivesNoSharesOfAProfileThatCapturedNoRun) {
  const std::string uncaptured = scratch_.file("uncaptured.pop");
  {
    traces::ProfileWriter w(uncaptured);
    w.setMeta("clock_hz", "1e9");
    w.addRun({0, 0, "train", 0, 1000, 2, false});
    w.commit();
  }
  ProfileSession a(uncaptured, false), b(path_, false);
  for (const auto& r : compareProfiles(a, b)) {
    if (!r.percent) continue;
    EXPECT_TRUE(std::isnan(r.a)) << r.metric << ": " << r.a;
    EXPECT_FALSE(std::isnan(r.b)) << r.metric;
  }
}

TEST_F(ProfileSessionTest, ABrokenFileIsAProfileErrorNamingIt) {
  const std::string path = scratch_.file("not-a-profile.pop");
  std::ofstream(path) << "hello";
  try {
    ProfileSession s(path);
    FAIL() << "expected ProfileError";
  } catch (const traces::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("not-a-profile.pop"), std::string::npos) << e.what();
  }
}

TEST_F(ProfileSessionTest, ANewerSchemaIsAProfileErrorNamingTheVersion) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    ProfileSession s(path_);
    FAIL() << "expected ProfileError";
  } catch (const traces::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("profile.pop"), std::string::npos) << e.what();
  }
}

// Opening makes the cheap checks only; the row counts run after it and name
// the file and the table that fails them (the app then refuses the file).
TEST_F(ProfileSessionTest, TheChecksAfterOpeningNameTheFileAndTheFailedCheck) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DELETE FROM counters WHERE ts = 900", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  ProfileSession s(path_);
  s.waitForChecks();
  EXPECT_TRUE(s.backgroundChecksDone());
  EXPECT_EQ(s.verificationError(), path_ + ": damaged profile: table counters has 1 rows, its writer recorded 2");
}

TEST_F(ProfileSessionTest, RecentProfilesKeepsNewestFirstWithoutDuplicates) {
  const std::string file = scratch_.file("state/ipusim/recent-profiles");
  {
    RecentProfiles r(file);
    EXPECT_TRUE(r.remember("/a.pop"));
    EXPECT_TRUE(r.remember("/b.pop"));
    EXPECT_TRUE(r.remember("/a.pop"));
  }
  RecentProfiles again(file);
  EXPECT_EQ(again.paths(), (std::vector<std::string>{"/a.pop", "/b.pop"}));
}

// The three ways a lane loads — the packed copy in writing order, the packed
// copy of a track written out of order (a parent after its children), and a
// profile without a packed copy (row by row) — give the same rows.
TEST(LaneLoading, PackedInOrderOutOfOrderAndRowByRowAgree) {
  testing::ScratchDirectory scratch;
  const std::string path = scratch.file("order.pop");
  {
    traces::ProfileWriter w(path);
    const auto bsp = w.addTrack({0, -1, "bsp", "IPU 0 BSP", 0, -1, 0});
    const auto program = w.addTrack({0, -1, "program", "IPU 0 programs", 0, -1, 1});
    for (int i = 0; i < 50; ++i) {
      w.addSlice({0, bsp, 0, i * 100, 60, i % 2 ? "exchange" : "compute", i % 2 ? "exchange" : "compute", 0, -1, 3,
                  i % 2 ? -1 : 7, -1});
      // Children first, then their parent (as a profiler that learns a
      // duration at the end writes them), and one overlap at depth 1.
      w.addSlice({0, program, 0, i * 100 + 10, 30, "child", "compute", 1, -1, 3, -1, -1});
      w.addSlice({0, program, 0, i * 100 + 20, 30, "overlapping child", "compute", 1, -1, 3, -1, -1});
      w.addSlice({0, program, 0, i * 100, 90, "parent", "program", 0, -1, 2, -1, -1});
    }
    w.commit();
  }
  const auto snapshot = [](const ProfileSession& s) {
    std::vector<std::string> out;
    for (const auto& lane : s.lanes()) {
      out.push_back(lane->title + " first phase " + std::to_string(lane->firstPhaseId));
      for (std::size_t r = 0; r < lane->rows.size(); ++r) {
        const auto& row = lane->rows[r];
        for (std::size_t i = 0; i < row.size(); ++i)
          out.push_back(std::to_string(lane->rowDepth[r]) + "/" + std::to_string(r) + " " +
                        std::to_string(row.start[i]) + "-" + std::to_string(row.end[i]) + " #" +
                        std::to_string(row.sliceId[i]) + " " + lane->strings.at(row.name[i]) + " " +
                        lane->strings.at(row.category[i]) + " p" + std::to_string(row.programId[i]));
      }
    }
    return out;
  };
  std::vector<std::string> packed;
  {
    ProfileSession s(path, false);
    packed = snapshot(s);
    ASSERT_EQ(s.lanes().size(), 2u);
    const Lane& programs = *s.lanes()[0];  // programs before BSP
    const Lane& bsp = *s.lanes()[1];
    EXPECT_EQ(bsp.firstPhaseId, 7);
    EXPECT_EQ(programs.rows.size(), 3u);  // depth 0, depth 1, depth 1 overlaps
    EXPECT_EQ(programs.rows[0].size(), 50u);
    EXPECT_EQ(programs.strings.at(programs.rows[0].name[0]), "parent");
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE slice_chunks; DROP TABLE slice_strings;", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  ProfileSession rowByRow(path, false);
  EXPECT_EQ(snapshot(rowByRow), packed);
}

}  // namespace
}  // namespace ipusim::viewer::profile_session_test
