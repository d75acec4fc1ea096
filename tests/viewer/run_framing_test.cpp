#include "viewer/core/run_framing.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>

namespace ipusim::viewer::run_framing_test {
namespace {

// Four runs of 1,000 cycles, 200 apart; only the first three captured.
std::vector<traces::RunRow> fourRuns() {
  return {{0, 0, "train", 100, 1100, 10, true},
          {1, 0, "train", 1300, 2300, 10, true},
          {2, 0, "train", 2500, 3500, 10, true},
          {3, 0, "train", 3700, 4700, 10, false}};
}

std::string messageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

TEST(RunFraming, OpensOnTheFirstTwoCapturedRunsWithAMargin) {
  const auto w = capturedRunsWindow(fourRuns());
  ASSERT_TRUE(w);
  EXPECT_EQ(w->runsFrom, 100);
  EXPECT_EQ(w->runsTo, 2300);
  // 1.5 % of the 2,200 cycles each side.
  EXPECT_DOUBLE_EQ(w->shownFrom, 100 - 33);
  EXPECT_DOUBLE_EQ(w->shownTo, 2300 + 33);
}

TEST(RunFraming, SkipsRunsWithoutDetail) {
  auto runs = fourRuns();
  runs[0].captured = false;  // e.g. a warm-up run left out of the profile
  runs[3].captured = true;
  const auto w = capturedRunsWindow(runs);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->runsFrom, 1300);
  EXPECT_EQ(w->runsTo, 3500);
}

TEST(RunFraming, OneCapturedRunIsFramedAloneAndNoneMeansFitEverything) {
  auto runs = fourRuns();
  runs[1].captured = runs[2].captured = false;
  const auto one = capturedRunsWindow(runs);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->runsFrom, 100);
  EXPECT_EQ(one->runsTo, 1100);
  EXPECT_DOUBLE_EQ(one->shownFrom, 85);  // 1.5 % of 1,000
  runs[0].captured = false;
  EXPECT_FALSE(capturedRunsWindow(runs));
  EXPECT_FALSE(capturedRunsWindow({}));
}

TEST(RunFraming, ExplicitRunsIncludeUncapturedOnes) {
  const auto w = windowForRuns(fourRuns(), 2, 3);
  EXPECT_EQ(w.runsFrom, 2500);
  EXPECT_EQ(w.runsTo, 4700);
  EXPECT_DOUBLE_EQ(w.shownFrom, 2500 - 33);
  const auto single = windowForRuns(fourRuns(), 1, 1, 0.0);
  EXPECT_DOUBLE_EQ(single.shownFrom, 1299);  // at least one cycle of margin
  EXPECT_DOUBLE_EQ(single.shownTo, 2301);
}

TEST(RunFraming, MissingOrReversedRunsAreClearErrors) {
  EXPECT_EQ(messageOf([] { windowForRuns(fourRuns(), 2, 7); }),
            "run 7 does not exist (the profile has runs 0-3)");
  EXPECT_EQ(messageOf([] { windowForRuns(fourRuns(), 9, 9); }),
            "run 9 does not exist (the profile has runs 0-3)");
  EXPECT_EQ(messageOf([] { windowForRuns(fourRuns(), 2, 1); }), "runs 2-1: the first run is after the last");
  EXPECT_EQ(messageOf([] { windowForRuns({}, 0, 0); }),
            "run 0 does not exist (the profile has no Engine::run rows)");
}

TEST(RunFraming, CompareShowsTheLongerProfilesSpanFromEachFirstCapturedRun) {
  // B: runs of 100 cycles, 50 apart, from 1,000: its first two span 250.
  const std::vector<traces::RunRow> b = {{0, 0, "train", 1000, 1100, 1, true},
                                         {1, 0, "train", 1150, 1250, 1, true},
                                         {2, 0, "train", 1300, 1400, 1, false}};
  const auto w = compareWindow(fourRuns(), b);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->runsFrom, 100);  // A's anchor
  EXPECT_DOUBLE_EQ(w->shownFrom, 100 - 33);
  EXPECT_DOUBLE_EQ(w->span(), 2200 + 66);  // A's two runs are the longer span
  // The other way round B is the reference frame, still with A's span.
  const auto swapped = compareWindow(b, fourRuns());
  ASSERT_TRUE(swapped);
  EXPECT_EQ(swapped->runsFrom, 1000);
  EXPECT_DOUBLE_EQ(swapped->shownFrom, 1000 - 3.75);  // B's own margin (1.5 % of 250)
  EXPECT_DOUBLE_EQ(swapped->span(), 2200 + 66);
  EXPECT_FALSE(compareWindow({}, {}));
}

TEST(RunFraming, AlignmentAnchorIsTheFirstCapturedRun) {
  auto runs = fourRuns();
  EXPECT_EQ(alignmentAnchor(runs, -1), 100);
  runs[0].captured = false;
  EXPECT_EQ(alignmentAnchor(runs, -1), 1300);
  for (auto& r : runs) r.captured = false;
  EXPECT_EQ(alignmentAnchor(runs, -1), 100);  // the first run, captured or not
  EXPECT_EQ(alignmentAnchor({}, 42), 42);
}

TEST(RunFraming, ParsesCycleAndRunRanges) {
  auto r = parseRangeSpec("380:720");
  EXPECT_EQ(r.unit, RangeSpec::Unit::Cycles);
  EXPECT_EQ(r.from, 380);
  EXPECT_EQ(r.to, 720);
  r = parseRangeSpec("runs:0-1");
  EXPECT_EQ(r.unit, RangeSpec::Unit::Runs);
  EXPECT_EQ(r.from, 0);
  EXPECT_EQ(r.to, 1);
  r = parseRangeSpec("runs:12");
  EXPECT_EQ(r.unit, RangeSpec::Unit::Runs);
  EXPECT_EQ(r.from, 12);
  EXPECT_EQ(r.to, 12);
}

TEST(RunFraming, RejectsMalformedRangesQuotingThem) {
  for (const char* bad : {"720:380", "5:5", "abc", "1:2x", ":9", "runs:", "runs:2-1", "runs:-1", "runs:1-x",
                          "runs:1-2-3", "runs:a"}) {
    const std::string message = messageOf([&] { parseRangeSpec(bad); });
    EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("runs:A-B"), std::string::npos) << message;
  }
  // Well formed, but over int64: it said "is neither FROM:TO ... with FROM < TO" (adversarial pass 19).
  EXPECT_EQ(messageOf([] { parseRangeSpec("0:18446744073709551615"); }),
            "--range: '0:18446744073709551615': 18446744073709551615 is out of range: cycles and run indices are "
            "at most 9223372036854775807");
  EXPECT_NE(messageOf([] { parseRangeSpec("runs:0-99999999999999999999"); }).find("is out of range"),
            std::string::npos);
}

}  // namespace
}  // namespace ipusim::viewer::run_framing_test
