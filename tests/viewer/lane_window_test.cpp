// Windowed lanes: a track of several packed chunks opens as its summary and
// chunk spans only; a window holds exactly the slices meeting it, read from
// the chunks meeting it; the summary draws at most one span per pixel column.
#include "sample_profile.hpp"
#include "traces/profile_writer.hpp"
#include "viewer/core/lane_loader.hpp"
#include "viewer/core/lane_window.hpp"
#include "viewer/core/profile_session.hpp"

#include <gtest/gtest.h>

namespace ipusim::viewer::lane_window_test {
namespace {

constexpr std::int64_t kSlices = 200'000;  // 4 chunks of at most 65,536

// Slices of 6 cycles every 10 on a BSP track; one host slice.
std::string writeProfile(testing::ScratchDirectory& dir) {
  const std::string path = dir.file("big.pop");
  traces::ProfileWriter w(path);
  const auto bsp = w.addTrack({0, -1, "bsp", "IPU 0 BSP", 0, -1, 0});
  const auto host = w.addTrack({0, -1, "host", "host", -1, -1, 1});
  for (std::int64_t i = 0; i < kSlices; ++i)
    w.addSlice({0, bsp, 0, i * 10, 6, "compute", "compute", 0, -1, -1, -1, -1});
  w.addSlice({0, host, -1, 0, 5, "prepare", "host", 0, -1, -1, -1, -1});
  w.commit();
  return path;
}

const Lane& laneOfKind(const ProfileSession& s, const std::string& kind) {
  for (const auto& l : s.lanes())
    if (l->trackKind == kind) return *l;
  throw std::runtime_error("no lane of kind " + kind);
}

TEST(LaneWindow, ABigTrackOpensAsItsSummaryAndASmallOneWhole) {
  testing::ScratchDirectory dir;
  ProfileSession s(writeProfile(dir), /*loadInBackground=*/false);
  const Lane& bsp = laneOfKind(s, "bsp");
  EXPECT_TRUE(bsp.windowed);
  EXPECT_EQ(bsp.chunks.size(), 4u);
  EXPECT_EQ(bsp.sliceCount, std::uint64_t(kSlices));
  ASSERT_EQ(bsp.summary.size(), 1u);
  EXPECT_EQ(bsp.rows.size(), 1u);
  EXPECT_TRUE(bsp.rows[0].empty());  // no slice read yet
  const Lane& host = laneOfKind(s, "host");
  EXPECT_FALSE(host.windowed);
  EXPECT_EQ(host.rows[0].size(), 1u);
}

TEST(LaneWindow, PlansOnlyTheChunksMeetingTheViewWithAMargin) {
  std::vector<traces::PackedChunkSpan> chunks;
  for (std::int64_t c = 0; c < 10; ++c) chunks.push_back({c, 100, c * 1000, c * 1000 + 999});
  const auto plan = planWindow(chunks, 4200, 4400, 24);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->from, 4200 - 201);
  EXPECT_EQ(plan->to, 4401 + 201);
  EXPECT_EQ(plan->chunks, (std::vector<std::int64_t>{3, 4}));  // 3 ends at 3999 >= 3999
  // Too many chunks with the margin: the view alone.
  const auto tight = planWindow(chunks, 2500, 5500, 4);
  ASSERT_TRUE(tight);
  EXPECT_EQ(tight->chunks, (std::vector<std::int64_t>{2, 3, 4, 5}));
  // Too many even then: the summary stands for them.
  EXPECT_FALSE(planWindow(chunks, 0, 9999, 4));
}

TEST(LaneWindow, AWindowHoldsExactlyTheSlicesMeetingIt) {
  testing::ScratchDirectory dir;
  ProfileSession s(writeProfile(dir), /*loadInBackground=*/false);
  std::size_t index = 0;
  while (s.lanes()[index]->trackKind != "bsp") ++index;
  Lane& bsp = *s.lanes()[index];
  // Slice i covers [10 i, 10 i + 6): the view [700,003, 700,100) meets slices 70,000 .. 70,009.
  const auto plan = planWindow(bsp.chunks, 700'003, 700'100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->chunks, (std::vector<std::int64_t>{1}));  // slices 65,536 .. 131,071
  s.requestWindow(index, *plan);
  ASSERT_TRUE(adoptPendingWindow(bsp));
  EXPECT_FALSE(adoptPendingWindow(bsp));  // taken once
  ASSERT_TRUE(bsp.window);
  EXPECT_EQ(bsp.window->first, plan->from);
  const auto& row = bsp.rows.at(0);
  // Every slice meeting [from, to), and no other.
  const std::int64_t first = (plan->from - 6 + 9) / 10, last = (plan->to - 1) / 10;
  ASSERT_EQ(std::int64_t(row.size()), last - first + 1);
  EXPECT_EQ(row.start.front(), first * 10);
  EXPECT_EQ(row.start.back(), last * 10);
  EXPECT_EQ(bsp.strings.at(row.name.front()), "compute");
}

TEST(LaneWindow, TheSummaryDrawsTheBusyShareAtMostOnceAPixelColumn) {
  testing::ScratchDirectory dir;
  ProfileSession s(writeProfile(dir), /*loadInBackground=*/false);
  const Lane& bsp = laneOfKind(s, "bsp");
  const BusySummary& summary = bsp.summary.at(0);
  // The whole track on 1,000 pixels: 6 busy cycles in 10 everywhere, drawn
  // as ceil(0.6 x 8) / 8 of the row, in one span.
  std::vector<BusySpan> spans;
  summary.spans(TimeAxis(0, double(kSlices * 10), 1000), spans);
  ASSERT_GE(spans.size(), 1u);
  EXPECT_LE(spans.size(), 3u);  // the last column may be partly empty
  EXPECT_EQ(spans[0].x0, 0);
  EXPECT_EQ(spans[0].busy, 5.0f / 8);
  EXPECT_EQ(summary.categoryName(spans[0].category), "compute");
  double covered = 0;
  for (const auto& sp : spans) covered += sp.x1 - sp.x0;
  EXPECT_GE(covered, 999);
  EXPECT_LE(covered, 1000);
}

}  // namespace
}  // namespace ipusim::viewer::lane_window_test
