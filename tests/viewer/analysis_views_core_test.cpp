// The GUI-free parts of the viewer's search, memory tooltip and operations
// table (viewer/core): what the shell shows is decided here.
#include "viewer/core/memory_tooltip.hpp"
#include "viewer/core/operations_table.hpp"
#include "viewer/core/slice_search.hpp"

#include <gtest/gtest.h>

namespace ipusim::viewer::analysis_views_core_test {
namespace {

std::unique_ptr<Lane> laneWith(const std::vector<std::pair<std::string, std::int64_t>>& slices, int rows = 1) {
  auto lane = std::make_unique<Lane>();
  lane->rows.resize(rows);
  lane->rowDepth.assign(rows, 0);
  std::int64_t id = 1;
  for (const auto& [name, start] : slices) {
    const auto n = lane->strings.intern(name);
    const auto c = lane->strings.intern("compute");
    lane->rows[std::size_t(id - 1) % rows].push(start, start + 10, id, n, std::uint8_t(c));
    ++id;
  }
  lane->loaded.store(true);
  return lane;
}

TEST(SliceSearch, FindsNamesCaseInsensitivelyInTimeOrderAndWraps) {
  std::vector<std::unique_ptr<Lane>> lanes;
  lanes.push_back(laneWith({{"dense/matmul", 100}, {"dense/relu", 200}, {"Dense_1/MatMul", 300}}));
  lanes.push_back(laneWith({{"StreamCopy images", 50}, {"dense/MATMUL grad", 150}}));
  SliceSearch search;
  search.run(lanes, "matmul");
  ASSERT_EQ(search.count(), 3u);
  EXPECT_EQ(search.current()->start, 100);
  search.next();
  EXPECT_EQ(search.current()->start, 150);
  EXPECT_EQ(search.current()->lane, 1u);
  search.next();
  search.next();  // wraps to the first
  EXPECT_EQ(search.current()->start, 100);
  search.previous();  // wraps to the last
  EXPECT_EQ(search.current()->start, 300);
  search.run(lanes, "no such slice");
  EXPECT_EQ(search.count(), 0u);
  EXPECT_FALSE(search.current());
  search.run(lanes, "");
  EXPECT_EQ(search.count(), 0u);
}

TEST(SliceSearch, SkipsLanesNotLoadedYet) {
  std::vector<std::unique_ptr<Lane>> lanes;
  lanes.push_back(laneWith({{"matmul", 1}}));
  lanes.back()->loaded.store(false);
  SliceSearch search;
  search.run(lanes, "matmul");
  EXPECT_EQ(search.count(), 0u);
}

TEST(MemoryTooltip, ShowsThePeakThenWhatTileMemoryHoldsForTheTile) {
  MemorySummary m;
  m.categories = {"weights", "activations"};
  m.bytes = {{100000, 26564}};
  m.total = {126564};
  m.fromPeaks = true;
  m.capacity = 638976;
  const std::vector<traces::TileMemoryRow> rows = {
      {0, 0, "weights", true, 100000}, {0, 0, "temporaries", false, 90000}, {0, 1, "weights", true, 5}};
  EXPECT_EQ(tileMemoryTooltip(m, rows, 0, 1472),
            "tile 0 (IPU 0, local 0): peak 126,564 B of 638,976 B (19.8%)\n"
            "tile_memory by category:\n"
            "  weights: 100,000 B\n"
            "  temporaries: 90,000 B (not always live)");
  m.fromPeaks = false;
  EXPECT_EQ(tileMemoryTooltip(m, {}, 0, 0), "tile 0: sum of tensors 126,564 B of 638,976 B (19.8%)");
  EXPECT_EQ(groupThousands(-1234567), "-1,234,567");
  EXPECT_EQ(tileMemoryTooltip(m, rows, 5, 1472), "tile 5: no memory rows");
}

TEST(OperationsTable, SortsByAColumnAndKeepsTheSelectedRow) {
  profiler::analysis::OperationsSummary s;
  profiler::analysis::OperationRow a, b, c;
  a.layer = "dense", a.op = "matmul", a.compute = 500, a.flops = 10, a.programIds = {3, 4};
  b.layer = "dense", b.op = "relu", b.compute = 100, b.flops = 30, b.programIds = {5};
  c.layer = "dense_1", c.op = "matmul", c.compute = 300, c.flops = 20, c.programIds = {7};
  s.rows = {a, b, c};
  OperationsTable table(s);
  table.select(0);  // dense/matmul
  EXPECT_EQ(table.selectedPrograms(), (std::unordered_set<std::int64_t>{3, 4}));
  table.sortBy(OperationColumn::Flops, /*ascending=*/false);
  EXPECT_EQ(table.rows()[0].op, "relu");
  EXPECT_EQ(table.rows()[table.selected()].op, "matmul");
  EXPECT_EQ(table.rows()[table.selected()].layer, "dense");
  table.sortBy(OperationColumn::Cycles, /*ascending=*/true);
  EXPECT_EQ(table.rows()[0].op, "relu");
  EXPECT_EQ(table.rows()[2].layer, "dense");
  table.sortBy(OperationColumn::Name, /*ascending=*/true);
  EXPECT_EQ(table.rows()[2].layer, "dense_1");
  EXPECT_TRUE(table.selectNamed("dense_1/mat"));
  EXPECT_EQ(table.selectedPrograms(), (std::unordered_set<std::int64_t>{7}));
  EXPECT_FALSE(table.selectNamed("conv"));
  EXPECT_EQ(table.selectedPrograms(), (std::unordered_set<std::int64_t>{7}));
  table.select(-1);
  EXPECT_TRUE(table.selectedPrograms().empty());
}

}  // namespace
}  // namespace ipusim::viewer::analysis_views_core_test
