// IntervalSet: the union arithmetic every analysis relies on.
#include "profiler/analysis/interval_set.hpp"

#include <gtest/gtest.h>

namespace test_analysis_intervals {

using ipusim::profiler::analysis::IntervalSet;

TEST(AnalysisIntervals, UnionMergesOverlapsAndNestingInAnyOrder) {
  IntervalSet s;
  s.add(10, 20);
  s.add(0, 5);
  s.add(12, 15);   // nested
  s.add(18, 30);   // overlapping
  s.add(5, 6);     // adjacent
  s.add(40, 40);   // empty: ignored
  ASSERT_EQ(s.intervals().size(), 2u);
  EXPECT_EQ(s.intervals()[0].begin, 0);
  EXPECT_EQ(s.intervals()[0].end, 6);
  EXPECT_EQ(s.intervals()[1].end, 30);
  EXPECT_EQ(s.length(), 26);
}

TEST(AnalysisIntervals, IntersectAndSubtract) {
  IntervalSet a, b;
  a.add(0, 100);
  a.add(200, 300);
  b.add(50, 250);
  EXPECT_EQ(a.intersect(b).length(), 100);
  const IntervalSet rest = a.subtract(b);
  ASSERT_EQ(rest.intervals().size(), 2u);
  EXPECT_EQ(rest.intervals()[0].end, 50);
  EXPECT_EQ(rest.intervals()[1].begin, 250);
  EXPECT_EQ(rest.length(), 100);
  EXPECT_EQ(b.subtract(a).length(), 100);
}

}  // namespace test_analysis_intervals
