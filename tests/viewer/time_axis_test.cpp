#include "viewer/core/time_axis.hpp"

#include <gtest/gtest.h>

namespace ipusim::viewer::time_axis_test {
namespace {

TEST(TimeAxis, ZoomKeepsTheCycleUnderTheCursor) {
  TimeAxis axis(0, 1000, 100);
  EXPECT_DOUBLE_EQ(axis.cyclesPerPixel(), 10);
  const double under = axis.cycleAt(30);
  axis.zoomAround(30, 4);
  EXPECT_DOUBLE_EQ(axis.cyclesPerPixel(), 2.5);
  EXPECT_DOUBLE_EQ(axis.cycleAt(30), under);
  axis.panPixels(10);  // drag right: earlier cycles come into view
  EXPECT_DOUBLE_EQ(axis.cycleAt(40), under);
}

TEST(TimeAxis, TicksAreRoundAndSpaced) {
  TimeAxis axis(0, 1'000'000, 1000);
  const auto ticks = axisTicks(axis, 100);  // at least 100 px = 100,000 cycles apart
  ASSERT_EQ(ticks.size(), 11u);
  EXPECT_DOUBLE_EQ(ticks[1].cycle, 100000);
  EXPECT_EQ(ticks[1].label, "100,000");
  const auto dense = axisTicks(axis, 150);  // 150,000 rounds up to 200,000
  ASSERT_GE(dense.size(), 2u);
  EXPECT_DOUBLE_EQ(dense[1].cycle - dense[0].cycle, 200000);
}

TEST(TimeAxis, FormatsCyclesAndTime) {
  EXPECT_EQ(formatCycles(1234567), "1,234,567");
  EXPECT_EQ(formatCycles(-1000), "-1,000");
  EXPECT_EQ(formatCyclesWithTime(1330000, 1.33e9), "1,330,000 cycles (1.000 ms)");
}

}  // namespace
}  // namespace ipusim::viewer::time_axis_test
