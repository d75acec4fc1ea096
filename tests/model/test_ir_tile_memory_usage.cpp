// ir::tileMemoryUsage (the one per-tile memory figure) and the Poplar-style
// out-of-memory summary built from it.
#include "model/ir/tile_memory_usage.hpp"

#include <gtest/gtest.h>

namespace test_ir_tile_memory_usage {

using namespace ipusim::ir;

namespace {

Tensor tensor(Id id, const std::string& name, std::uint64_t elements, DType dtype, const std::string& category,
              bool alwaysLive, std::vector<TileInterval> mapping) {
  Tensor t;
  t.id = id;
  t.name = name;
  t.shape = {elements};
  t.dtype = dtype;
  t.category = category;
  t.alwaysLive = alwaysLive;
  t.mapping = std::move(mapping);
  return t;
}

// Tile 0: weights w (100 floats = 400 B at 0), always live; two temporaries
// a (300 B) and b (200 halves = 400 B) that never live together, both at
// address 400. Tile 1: 3 floats of w2 at 8 (12 B).
std::vector<Tensor> sharedTile() {
  return {tensor(0, "w", 100, DType::Float, "weights", true, {{0, 0, 100, 0}}),
          tensor(1, "a", 75, DType::Float, "temporaries", false, {{0, 0, 75, 400}}),
          tensor(2, "b", 200, DType::Half, "activations", false, {{0, 0, 200, 400}}),
          tensor(3, "w2", 3, DType::Float, "weights", true, {{1, 0, 3, 8}})};
}

}  // namespace

TEST(TileMemoryUsage, PeakIsTheHighestPlacedByteNotTheSum) {
  const auto usage = tileMemoryUsage(sharedTile(), 4);
  ASSERT_EQ(usage.size(), 2u);  // only tiles holding data
  const TileMemoryUsage& t0 = usage[0];
  EXPECT_EQ(t0.tile, 0u);
  EXPECT_EQ(t0.peakBytes, 800u);  // max(400 + 300, 400 + 400), not 400 + 300 + 400
  EXPECT_EQ(t0.alwaysLiveBytes, 400u);
  EXPECT_EQ(t0.notAlwaysLivePeakBytes, 400u);
  // Categories: sums of tensors, which exceed the peak (1100 > 800).
  ASSERT_EQ(t0.categories.size(), 3u);
  EXPECT_EQ(t0.categories[0].category, "activations");
  EXPECT_EQ(t0.categories[0].bytes, 400u);
  EXPECT_FALSE(t0.categories[0].alwaysLive);
  EXPECT_EQ(t0.categories[1].category, "temporaries");
  EXPECT_EQ(t0.categories[1].bytes, 300u);
  EXPECT_EQ(t0.categories[2].category, "weights");
  EXPECT_EQ(t0.categories[2].bytes, 400u);
  // Largest first; ties by tensor id (w and b are both 400 B).
  ASSERT_EQ(t0.largest.size(), 3u);
  EXPECT_EQ(t0.largest[0].name, "w");
  EXPECT_EQ(t0.largest[1].name, "b");
  EXPECT_EQ(t0.largest[2].name, "a");
  // Tile 1: 8 + 12 = 20, aligned to 24.
  EXPECT_EQ(usage[1].tile, 1u);
  EXPECT_EQ(usage[1].peakBytes, 24u);
  EXPECT_EQ(usage[1].alwaysLiveBytes, 16u);  // 12 rounded up to 8
  EXPECT_EQ(usage[1].notAlwaysLivePeakBytes, 8u);
}

TEST(TileMemoryUsage, LargestIsLimitedAndIntervalsOfATensorAddUp) {
  std::vector<Tensor> tensors = {
      tensor(0, "x", 10, DType::Float, "activations", true, {{0, 0, 4, 0}, {1, 4, 6, 0}, {0, 6, 10, 16}})};
  const auto usage = tileMemoryUsage(tensors, 2, 1);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].peakBytes, 32u);
  ASSERT_EQ(usage[0].largest.size(), 1u);
  EXPECT_EQ(usage[0].largest[0].bytes, 32u);  // both intervals on tile 0
  EXPECT_EQ(usage[1].largest[0].bytes, 8u);
}

TEST(TileMemoryUsage, UnplacedOrOutOfRangeIntervalsAreErrors) {
  auto tensors = sharedTile();
  tensors[1].mapping[0].address = TileInterval::kUnplaced;
  try {
    tileMemoryUsage(tensors, 4);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'a'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("without an address"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tileMemoryUsage(sharedTile(), 1), std::invalid_argument);  // tile 1 of 1
}

TEST(TileMemoryUsage, OutOfMemorySummaryCountsTilesAndNamesTheWorst) {
  std::vector<Tensor> tensors;
  // Tiles 0..6 hold 200 * (tile + 1) bytes each; capacity 500: tiles 2..6 over.
  for (std::uint32_t tile = 0; tile < 7; ++tile)
    tensors.push_back(tensor(tile, "t" + std::to_string(tile), 50 * (tile + 1), DType::Float,
                             tile % 2 ? "weights" : "activations", true, {{tile, 0, 50 * (tile + 1), 0}}));
  const auto usage = tileMemoryUsage(tensors, 8);
  const OutOfMemory none = findOutOfMemory(usage, 1400);  // the fullest tile exactly fits
  EXPECT_EQ(none.tilesOver, 0u);
  EXPECT_EQ(outOfMemorySummary(none, 1400, 8, "'g.json'"), "");

  const OutOfMemory oom = findOutOfMemory(usage, 500, 3);
  EXPECT_EQ(oom.tilesOver, 5u);
  EXPECT_EQ(oom.excessBytes, 100u + 300u + 500u + 700u + 900u);
  ASSERT_EQ(oom.worst.size(), 3u);
  EXPECT_EQ(oom.worst[0].tile, 6u);
  EXPECT_EQ(oom.worst[1].tile, 5u);
  EXPECT_EQ(oom.worst[2].tile, 4u);
  const std::string text = outOfMemorySummary(oom, 500, 8, "'g.json'");
  EXPECT_NE(text.find("Out of memory in 'g.json': cannot fit all variable data onto 5 of 8 tiles "
                      "(tiles only have 500 bytes of memory); 2500 bytes over in total."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("The 3 worst tiles:"), std::string::npos) << text;
  EXPECT_NE(text.find("Out of memory on tile 6: 1400 bytes used (900 over; always-live 1400, not-always-live peak 0); "
                      "largest variables: 't6' (activations, 1400 bytes)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("tile 3:"), std::string::npos) << "only the 3 worst tiles are listed\n" << text;
}

TEST(TileMemoryUsage, ALongNameIsShortenedForTheSummaryOnEveryTile) {
  // A tensor on 64 tiles whose name (a Keras layer's, say) is 100,000
  // characters: each tile lists it, as its first 200 characters and "...";
  // copying it whole onto the lists of 1,472 tiles took 1.5 GB a name.
  std::vector<TileInterval> mapping;
  for (std::uint32_t tile = 0; tile < 64; ++tile) mapping.push_back({tile, tile * 4, tile * 4 + 4, 0});
  const std::string name(100'000, 'n');
  const auto usage = tileMemoryUsage({tensor(0, name, 256, DType::Float, "weights", true, mapping)}, 64);
  ASSERT_EQ(usage.size(), 64u);
  for (const TileMemoryUsage& u : usage) {
    ASSERT_EQ(u.largest.size(), 1u);
    EXPECT_EQ(u.largest[0].name, std::string(200, 'n') + "...");
  }
  const std::string summary = outOfMemorySummary(findOutOfMemory(usage, 8), 8, 64, "w.json");
  EXPECT_NE(summary.find("'" + std::string(200, 'n') + "...' (weights"), std::string::npos) << summary.substr(0, 400);
  EXPECT_LT(summary.size(), 5'000u);
}

}  // namespace test_ir_tile_memory_usage
