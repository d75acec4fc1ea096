// Counter lanes of a big track: drawn from counter_summary zoomed out (the
// same envelope as from the values), read by window zoomed in, and a hover
// that names true values.
#include "sample_profile.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"
#include "viewer/core/counter_envelope.hpp"
#include "viewer/core/counter_pyramid.hpp"
#include "viewer/core/lane_loader.hpp"
#include "viewer/core/profile_session.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ipusim::viewer::counter_lanes_test {
namespace {

// 200,000 loss values 10 cycles apart (buckets of 16 cycles: see
// tests/traces/counter_summary_test.cpp), an Engine::run over them.
class BigCounterProfile : public ::testing::Test {
 protected:
  static constexpr std::int64_t kValues = 200'000;
  static double valueAt(std::int64_t i) { return double((i * 7919) % 1000) / 8.0; }
  void SetUp() override {
    path_ = scratch_.file("profile.pop");
    traces::ProfileWriter w(path_);
    w.setMeta("clock_hz", "1000000000");
    const auto engine = w.addTrack({0, -1, "engine", "Engine::run", -1, -1, 0});
    loss_ = w.addTrack({0, -1, "counter", "loss", -1, -1, 1});
    w.addRun({0, 0, "main", 0, kValues * 10, kValues, true});
    w.addSlice({0, engine, 0, 0, kValues * 10, "Engine::run", "engine_run", 0, -1, -1, -1, -1});
    for (std::int64_t i = 0; i < kValues; ++i) {
      ts_.push_back(i * 10);
      value_.push_back(valueAt(i));
      w.addCounter({loss_, i * 10, valueAt(i), 0, i});
    }
    w.commit();
  }
  Lane& lossLane(ProfileSession& s) {
    for (auto& l : s.lanes())
      if (l->trackId == loss_) return *l;
    throw std::runtime_error("no loss lane");
  }
  testing::ScratchDirectory scratch_;
  std::string path_;
  std::int64_t loss_ = 0;
  std::vector<std::int64_t> ts_;
  std::vector<double> value_;
};

void expectSameColumns(const std::vector<CounterColumn>& actual, const std::vector<CounterColumn>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    SCOPED_TRACE("column " + std::to_string(i));
    EXPECT_EQ(actual[i].px, expected[i].px);
    EXPECT_EQ(actual[i].min, expected[i].min);
    EXPECT_EQ(actual[i].max, expected[i].max);
    EXPECT_EQ(actual[i].first, expected[i].first);
    EXPECT_EQ(actual[i].last, expected[i].last);
    EXPECT_EQ(actual[i].count, expected[i].count);
  }
}

TEST_F(BigCounterProfile, TheSummarysEnvelopeIsTheValuesEnvelope) {
  const traces::ProfileReader reader(path_);
  const CounterPyramid pyramid(*reader.counterSummary(loss_));
  EXPECT_EQ(pyramid.valueCount(), kValues);
  EXPECT_EQ(pyramid.min(), 0.0);
  EXPECT_EQ(pyramid.max(), 999.0 / 8);
  // Pixel columns of whole buckets: 128 cycles (8 buckets) from 0, the whole track.
  const TimeAxis whole(0, 128.0 * 15625, 15625);
  const auto columns = pyramid.columns(whole);
  EXPECT_EQ(columns.size(), 15625u);
  expectSameColumns(columns, counterEnvelope(ts_, value_, whole));
  // Zoomed in: 64 cycles a column from 102,400, with the value before the view.
  const TimeAxis zoomed(102400, 102400 + 64.0 * 500, 500);
  const auto zoomedColumns = pyramid.columns(zoomed);
  ASSERT_GE(zoomedColumns.size(), 2u);
  EXPECT_EQ(zoomedColumns[0].px, -1);  // ts 102,390
  EXPECT_EQ(zoomedColumns[0].last, valueAt(10239));
  expectSameColumns(zoomedColumns, counterEnvelope(ts_, value_, zoomed));
}

TEST_F(BigCounterProfile, ALaneKeepsTheSummaryAndReadsTheValuesInView) {
  ProfileSession s(path_, /*loadInBackground=*/false);
  Lane& lane = lossLane(s);
  ASSERT_TRUE(lane.counterSummary.has_value());
  EXPECT_TRUE(lane.counterTs.empty());  // nothing read but the summary
  EXPECT_EQ(lane.counterMin, 0.0);
  EXPECT_EQ(lane.counterMax, 999.0 / 8);
  // The whole track is more than a window may hold.
  EXPECT_FALSE(planCounterWindow(*lane.counterSummary, 0, 2e6, 100'000).has_value());
  // 60,000 values in view: with its margins (180,000) too many, the view alone fits.
  const auto narrow = planCounterWindow(*lane.counterSummary, 600'000, 1'200'000, 100'000);
  ASSERT_TRUE(narrow.has_value());
  EXPECT_EQ(narrow->from, 600'000);
  EXPECT_EQ(narrow->to, 1'200'001);
  // A view of 1,000 values: the view and one view width each side.
  const auto plan = planCounterWindow(*lane.counterSummary, 50'000, 60'000);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->from, 39'999);
  EXPECT_EQ(plan->to, 70'002);
  std::size_t index = 0;
  while (s.lanes()[index].get() != &lane) ++index;
  s.requestWindow(index, *plan);
  ASSERT_TRUE(adoptPendingWindow(lane));
  ASSERT_TRUE(lane.window.has_value());
  EXPECT_EQ(*lane.window, std::make_pair(std::int64_t(39'999), std::int64_t(70'002)));
  // ts 39,990 (the last before), 40,000 .. 70,000 (in it), 70,010 (the first after).
  std::vector<std::int64_t> expectedTs{39'990};
  std::vector<double> expectedValue{valueAt(3999)};
  for (std::int64_t i = 4000; i <= 7001; ++i) {
    expectedTs.push_back(i * 10);
    expectedValue.push_back(valueAt(i));
  }
  EXPECT_EQ(lane.counterTs, expectedTs);
  EXPECT_EQ(lane.counterValue, expectedValue);
  // The view drawn from the window is the view drawn from every value.
  const TimeAxis view(50'000, 60'000, 800);
  expectSameColumns(counterEnvelope(lane.counterTs, lane.counterValue, view), counterEnvelope(ts_, value_, view));
}

TEST_F(BigCounterProfile, AWindowOfADamagedProfileIsAnErrorNamingTheFile) {
  // Damaged before opening (the session's background checks hold a read lock meanwhile).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE counters SET ts = -5 WHERE ts = 50000", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  ProfileSession s(path_, false);  // the summary alone is read: the damage shows in a window
  Lane& lane = lossLane(s);
  const traces::ProfileReader reader(path_, traces::ProfileReader::Checks::WholeFileDeferred);
  try {
    loadWindow(reader, lane, WindowPlan{-100, 100, {}}, {});
    FAIL() << "expected ProfileError";
  } catch (const traces::ProfileError& e) {
    EXPECT_EQ(std::string(e.what()), path_ + ": counters of track " + std::to_string(loss_) + ": ts -5 is negative");
  }
}

TEST(CounterHover, NamesTheValueOrTheValuesOfTheColumn) {
  EXPECT_EQ(describeCounterColumn(CounterColumn{3, 2.5, 2.5, 2.5, 2.5, 1}), "2.5");
  EXPECT_EQ(describeCounterColumn(CounterColumn{3, 0.125, 124.875, 1, 2, 32}),
            "32 values, 0.125 .. 124.875 (first 1, last 2)");
  const std::vector<CounterColumn> columns{{0, 1, 1, 1, 1, 1}, {10, 2, 2, 2, 2, 1}};
  EXPECT_EQ(columnNear(columns, 8, 3)->px, 10);
  EXPECT_FALSE(columnNear(columns, 5, 3).has_value());
}

// A diverging training's loss: NaN and inf values are kept (written as
// SCHEMA.md says), read back as such, and the lane's range skips NaN.
TEST(NonFiniteCounter, ValuesComeBackAsWrittenAndTheRangeSkipsNan) {
  testing::ScratchDirectory scratch;
  const std::string path = scratch.file("profile.pop");
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {nan, 2.5, nan, 1.5, inf};
  std::int64_t loss = 0;
  {
    traces::ProfileWriter w(path);
    w.setMeta("clock_hz", "1000000000");
    loss = w.addTrack({0, -1, "counter", "loss", -1, -1, 1});
    w.addRun({0, 0, "main", 0, 100, 5, true});
    for (std::size_t i = 0; i < values.size(); ++i) w.addCounter({loss, std::int64_t(i) * 10, values[i], 0, std::int64_t(i)});
    w.commit();
  }
  const auto rows = traces::ProfileReader(path).counters(loss);
  ASSERT_EQ(rows.size(), values.size());
  EXPECT_TRUE(std::isnan(rows[0].value));
  EXPECT_EQ(rows[1].value, 2.5);
  EXPECT_EQ(rows[4].value, inf);
  ProfileSession s(path, /*loadInBackground=*/false);
  for (auto& lane : s.lanes()) {
    if (lane->trackId != loss) continue;
    EXPECT_EQ(lane->counterMin, 1.5);
    EXPECT_EQ(lane->counterMax, inf);
    ASSERT_EQ(lane->counterValue.size(), values.size());
    EXPECT_TRUE(std::isnan(lane->counterValue[2]));
  }
}

}  // namespace
}  // namespace ipusim::viewer::counter_lanes_test
