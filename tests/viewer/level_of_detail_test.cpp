// Folding keeps every slice accounted for, and its cost follows pixels.
#include "viewer/core/level_of_detail.hpp"

#include <gtest/gtest.h>

#include <random>

namespace ipusim::viewer::level_of_detail_test {
namespace {

// `n` non-overlapping slices: mostly tiny ones in bursts, some wide, random gaps.
SliceColumns randomRow(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  SliceColumns row;
  std::int64_t t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    t += std::int64_t(rng() % 4 == 0 ? rng() % 5000 : rng() % 3);
    const std::int64_t dur = rng() % 50 == 0 ? 2000 + std::int64_t(rng() % 20000) : std::int64_t(rng() % 20);
    row.push(t, t + dur, std::int64_t(i), 0, 0);
    t += dur;
  }
  return row;
}

std::size_t overlapping(const SliceColumns& row, double from, double to) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < row.size(); ++i)
    if (double(row.end[i]) > from && double(row.start[i]) <= to) ++n;
  return n;
}

TEST(LevelOfDetail, ZoomedOutEverySliceIsInExactlyOneBlock) {
  const auto row = randomRow(200000, 1);
  TimeAxis axis(double(row.start.front()), double(row.end.back()), 1600);
  std::vector<DrawBlock> blocks;
  foldRow(row, axis, {}, blocks);
  std::size_t total = 0, next = 0;
  for (const auto& b : blocks) {
    EXPECT_EQ(b.first, next) << "blocks must cover consecutive slices";
    total += b.count;
    next = b.first + b.count;
    EXPECT_EQ(b.start, row.start[b.first]);
    EXPECT_EQ(b.end, row.end[b.first + b.count - 1]);
  }
  EXPECT_EQ(total, row.size());
  // Cost follows pixels: far fewer blocks than slices, bounded by the width.
  EXPECT_LT(blocks.size(), 1600u);
  EXPECT_GT(blocks.size(), 10u);
}

TEST(LevelOfDetail, AtEveryZoomTheBlocksHoldExactlyTheVisibleSlices) {
  const auto row = randomRow(20000, 2);
  const double span = double(row.end.back() - row.start.front());
  for (double fraction : {1.0, 0.3, 0.01, 0.001, 1e-5}) {
    for (double at : {0.0, 0.25, 0.77}) {
      const double from = double(row.start.front()) + span * at;
      TimeAxis axis(from, from + span * fraction, 1000);
      std::vector<DrawBlock> blocks;
      foldRow(row, axis, {}, blocks);
      // Every visible slice is in a block; a fold may run past the right edge.
      std::size_t counted = 0;
      for (const auto& b : blocks) counted += b.count;
      std::size_t visible = overlapping(row, axis.startCycle(), axis.endCycle());
      std::size_t beyond = 0;
      if (!blocks.empty()) {
        const auto& last = blocks.back();
        for (std::size_t i = last.first; i < last.first + last.count; ++i)
          if (double(row.start[i]) > axis.endCycle()) ++beyond;
      }
      EXPECT_EQ(counted, visible + beyond) << "fraction " << fraction << " at " << at;
      for (const auto& b : blocks) {
        if (b.folded()) continue;
        // A lone narrow slice is a block of one; anything else unfolded is wide.
        EXPECT_EQ(b.count, 1u);
      }
      for (std::size_t i = 1; i < blocks.size(); ++i) EXPECT_LE(blocks[i - 1].end, blocks[i].start);
    }
  }
}

TEST(LevelOfDetail, WideSlicesAreNeverFolded) {
  SliceColumns row;
  // 100 slivers of 1 cycle, then one slice of 10,000 cycles, then more slivers.
  for (int i = 0; i < 100; ++i) row.push(i * 2, i * 2 + 1, i, 0, 0);
  row.push(200, 10200, 100, 0, 0);
  for (int i = 0; i < 100; ++i) row.push(10200 + i * 2, 10201 + i * 2, 101 + i, 0, 0);
  TimeAxis axis(0, 10400, 1040);  // 10 cycles per pixel: slivers fold, the wide one does not
  std::vector<DrawBlock> blocks;
  foldRow(row, axis, {}, blocks);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].count, 100u);
  EXPECT_EQ(blocks[0].start, 0);
  EXPECT_EQ(blocks[0].end, 199);
  EXPECT_EQ(blocks[1].count, 1u);
  EXPECT_EQ(blocks[1].first, 100u);
  EXPECT_EQ(blocks[2].count, 100u);
  EXPECT_EQ(blocks[2].end, 10399);
}

TEST(LevelOfDetail, ZoomedInNothingFolds) {
  SliceColumns row;
  for (int i = 0; i < 50; ++i) row.push(i * 10, i * 10 + 5, i, 0, 0);
  TimeAxis axis(0, 500, 1000);  // 2 px per cycle: every slice is 10 px wide
  std::vector<DrawBlock> blocks;
  foldRow(row, axis, {}, blocks);
  ASSERT_EQ(blocks.size(), 50u);
  for (const auto& b : blocks) EXPECT_FALSE(b.folded());
}

TEST(LevelOfDetail, TenMillionSlicesFoldInAFewThousandSteps) {
  SliceColumns row;
  const std::size_t n = 10'000'000;
  row.start.resize(n);
  row.end.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    row.start[i] = std::int64_t(i) * 10;
    row.end[i] = std::int64_t(i) * 10 + 6;
  }
  TimeAxis axis(0, double(n) * 10, 1600);
  std::vector<DrawBlock> blocks;
  foldRow(row, axis, {}, blocks);
  std::size_t total = 0;
  for (const auto& b : blocks) total += b.count;
  EXPECT_EQ(total, n);
  EXPECT_LE(blocks.size(), 1600u);
}

TEST(LevelOfDetail, AFoldTakesTheCategoryCoveringTheMostCycles) {
  // exchange (2), then compute (1) x3 of 5 cycles each, then sync (3).
  SliceColumns row;
  row.push(0, 4, 0, 0, 2);
  row.push(4, 9, 1, 0, 1);
  row.push(9, 14, 2, 0, 1);
  row.push(14, 19, 3, 0, 1);
  row.push(19, 20, 4, 0, 3);
  EXPECT_EQ(foldCategory(row, DrawBlock{0, 20, 0, 5}), 1);  // compute: 15 of 20 cycles
  EXPECT_EQ(foldCategory(row, DrawBlock{0, 4, 0, 1}), 2);   // a plain slice: its own
  EXPECT_EQ(foldCategory(row, DrawBlock{14, 20, 3, 2}), 1); // compute 5 > sync 1
  // Sampling two of five (the first and the last): exchange 4 > sync 1.
  EXPECT_EQ(foldCategory(row, DrawBlock{0, 20, 0, 5}, 2), 2);
}

}  // namespace
}  // namespace ipusim::viewer::level_of_detail_test
