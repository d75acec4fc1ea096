// The memory view's per-tile figure is the profile's peak (tile_memory_peak),
// with the category breakdown scaled to fit it where tensors share bytes.
#include "viewer/core/memory_summary.hpp"

#include <gtest/gtest.h>

namespace memory_summary_test {

using namespace ipusim;

TEST(MemorySummary, TotalsAreThePeaksAndCategoriesAreScaledIntoThem) {
  // Tile 0: weights 300 + activations 200 + temporaries 500 = 1000 B of
  // tensors, peak 600 (the not-always-live two share bytes); tile 2: 100 B, peak 104.
  const std::vector<traces::TileMemoryRow> rows = {{0, 0, "weights", true, 300},
                                                   {0, 0, "activations", false, 200},
                                                   {0, 0, "temporaries", false, 500},
                                                   {0, 2, "weights", true, 100}};
  const std::vector<traces::TileMemoryPeakRow> peaks = {{0, 0, 600, 304, 296}, {0, 2, 104, 104, 0}};
  const auto m = viewer::summarizeMemory(rows, peaks, 4, 550);
  ASSERT_EQ(m.tileCount(), 4u);
  EXPECT_TRUE(m.fromPeaks);
  EXPECT_EQ(m.total, (std::vector<std::int64_t>{600, 0, 104, 0}));
  EXPECT_EQ(m.maxTotal, 600);
  EXPECT_EQ(m.tilesOverCapacity, 1);
  // Categories in first-seen order: weights, activations, temporaries; x 0.6 on tile 0.
  EXPECT_EQ(m.bytes[0], (std::vector<std::int64_t>{180, 120, 300}));
  // Tile 2's categories (100) are below its peak (104: alignment): unscaled.
  EXPECT_EQ(m.bytes[2], (std::vector<std::int64_t>{100, 0, 0}));
  // The legend keeps the unscaled totals.
  EXPECT_EQ(m.categoryBytes, (std::vector<std::int64_t>{400, 200, 500}));
}

}  // namespace memory_summary_test
