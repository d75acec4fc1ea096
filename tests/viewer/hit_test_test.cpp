// Hit testing finds the slice (or folded block) under a point.
#include "viewer/core/hit_test.hpp"

#include <gtest/gtest.h>

namespace ipusim::viewer::hit_test_test {
namespace {

SliceColumns threeSlices() {
  SliceColumns row;
  row.push(100, 200, 11, 0, 0);
  row.push(200, 200, 12, 0, 0);  // zero length, right after the first
  row.push(500, 800, 13, 0, 0);
  return row;
}

TEST(HitTest, FindsTheSliceContainingACycle) {
  const auto row = threeSlices();
  EXPECT_FALSE(sliceAt(row, 99).has_value());
  EXPECT_EQ(sliceAt(row, 100), 0u);
  EXPECT_EQ(sliceAt(row, 199), 0u);
  EXPECT_EQ(sliceAt(row, 200), 1u);  // the zero-length slice holds its own start
  EXPECT_FALSE(sliceAt(row, 201).has_value());
  EXPECT_EQ(sliceAt(row, 650), 2u);
  EXPECT_FALSE(sliceAt(row, 800).has_value());
}

TEST(HitTest, NearPicksTheClosestWithinTolerance) {
  const auto row = threeSlices();
  EXPECT_EQ(sliceNear(row, 495, 10), 2u);
  EXPECT_EQ(sliceNear(row, 805, 10), 2u);
  EXPECT_FALSE(sliceNear(row, 350, 10).has_value());
}

TEST(HitTest, BlockUnderAPixel) {
  SliceColumns row;
  for (int i = 0; i < 1000; ++i) row.push(i * 3, i * 3 + 1, i, 0, 0);  // slivers [0, 3000)
  row.push(5000, 9000, 1000, 0, 0);
  TimeAxis axis(0, 10000, 1000);  // 10 cycles per pixel
  std::vector<DrawBlock> blocks;
  foldRow(row, axis, {3.0, 3.0, /*maxFoldPx=*/1e9}, blocks);
  ASSERT_EQ(blocks.size(), 2u);
  auto folded = blockAt(blocks, axis, 150.0);  // cycle 1500: inside the slivers
  ASSERT_TRUE(folded.has_value());
  EXPECT_EQ(blocks[*folded].count, 1000u);
  auto wide = blockAt(blocks, axis, 700.0);  // cycle 7000
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(blocks[*wide].first, 1000u);
  EXPECT_FALSE(blockAt(blocks, axis, 400.0).has_value());  // the gap at 4000
}

}  // namespace
}  // namespace ipusim::viewer::hit_test_test
