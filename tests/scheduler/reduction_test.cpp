// Staged reductions: the right sums, spread over the tiles owning the
// output and over all six workers, in two compute phases rather than one
// worker of one tile; timed as the machine model runs them.
#include "model/hardware/loaded_executable.hpp"
#include "scheduler/planning/cost_model.hpp"
#include "scheduler/lowering/ir_builder.hpp"
#include "scheduler/planning/memory_plan.hpp"
#include "scheduler/lowering/reduction.hpp"
#include "scheduler/planning/tile_mapper.hpp"
#include "small_target.hpp"
#include "static_runner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

namespace ipusim::scheduler::reduction_test {
namespace {

using testing::ipu2;

struct Reduced {
  std::vector<float> out;
  ir::Cycles cycles;
  std::vector<ir::ComputeSet> computeSets;
};

// in (rows x cols, values v(r, c)) mapped by the tile mapper; `columns`:
// reduceColumns into a cols-vector mapped likewise, else reduceAll into one element.
Reduced reduce(std::uint64_t rows, std::uint64_t cols, bool columns, double scale, std::uint32_t tiles) {
  const model::Target target = ipu2(tiles);
  IrBuilder b(target);
  b.beginOp({"layer", "reduce"});
  const ir::Id in = b.addTensor("in", {rows, cols}, ir::DType::Float, "activations", true,
                                mapTensor({rows, cols}, ir::DType::Float, target, tiles));
  const std::uint64_t outSize = columns ? cols : 1;
  const ir::Id out = b.addTensor("out", {outSize}, ir::DType::Float, "gradients", true,
                                 columns ? mapTensor({cols}, ir::DType::Float, target, tiles) : onTile(1, tiles - 1));
  if (columns) reduceColumns(b, in, rows, cols, out, scale);
  else reduceAll(b, in, rows * cols, out, scale);
  const std::vector<ir::Id> programs = b.endOp();
  ir::Executable exe = b.exe();
  planMemory(exe, b.useSpans(), tiles, target.tile.memoryBytes, false);
  exe.validate(tiles);
  model::hardware::LoadedExecutable loaded(exe, target, true);
  std::vector<float> values(rows * cols);
  for (std::uint64_t i = 0; i < values.size(); ++i) values[i] = float((i * 37) % 101) / 16.0f - 3.0f;
  loaded.memory.write(in, reinterpret_cast<const std::uint8_t*>(values.data()));
  Reduced r{std::vector<float>(outSize), testing::runStatically(loaded, programs), exe.computeSets};
  loaded.memory.read(out, reinterpret_cast<std::uint8_t*>(r.out.data()));
  return r;
}

float value(std::uint64_t i) { return float((i * 37) % 101) / 16.0f - 3.0f; }

TEST(Reduction, ColumnSumsAreRightAndUseEveryOwnerAndAllWorkers) {
  const std::uint64_t rows = 96, cols = 200;
  const Reduced r = reduce(rows, cols, true, 0.5, 16);
  for (std::uint64_t c = 0; c < cols; ++c) {
    double sum = 0;
    for (std::uint64_t row = 0; row < rows; ++row) sum += value(row * cols + c);
    EXPECT_NEAR(r.out[c], 0.5 * sum, 1e-4 * std::fabs(sum) + 1e-5) << "column " << c;
  }
  ASSERT_EQ(r.computeSets.size(), 2u);  // rows by worker groups, then the groups
  std::set<std::uint32_t> tiles;
  std::map<std::uint32_t, int> perTile;
  for (const ir::Vertex& v : r.computeSets[0].vertices) tiles.insert(v.tile), ++perTile[v.tile];
  // Every tile owning part of the output (200 floats, at least 128 bytes a tile: 6 tiles).
  EXPECT_EQ(tiles.size(), mapTensor({cols}, ir::DType::Float, ipu2(16), 16).size());
  EXPECT_EQ(tiles.size(), 6u);
  for (auto [tile, n] : perTile) EXPECT_EQ(n, 6) << "tile " << tile;  // one row group per worker
}

// A bias gradient on one worker of one tile (the first compiler's) costs
// rows x (row overhead + vectors); staged it costs about a sixth per tile.
TEST(Reduction, StagedColumnSumsBeatOneVertexOnOneTile) {
  const std::uint64_t rows = 32, cols = 128;
  const Reduced staged = reduce(rows, cols, true, 1, 64);
  const model::Target t = ipu2(64);
  const ir::Cycles oneVertex = vertexCycles("ReduceSum", {rows * cols, cols},
                                            {{"rows", double(rows)}, {"cols", double(cols)}, {"axis", 0}, {"scale", 1}, {"accumulate", 0}}, t);
  EXPECT_LT(staged.cycles, computePhaseCycles(tileCycles({oneVertex}, {}, t), t));
}

TEST(Reduction, WholeSumFoldsChunksOnEveryWorkerThenTheirSums) {
  const std::uint64_t n = 1000;
  const Reduced r = reduce(n, 1, false, 1.0 / n, 8);
  double sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += value(i);
  EXPECT_NEAR(r.out[0], sum / n, 1e-5);
  ASSERT_EQ(r.computeSets.size(), 2u);
  EXPECT_EQ(r.computeSets[0].vertices.size(), 6u);  // one chunk per worker
  EXPECT_EQ(r.computeSets[1].vertices.size(), 1u);  // their six sums
}

}  // namespace
}  // namespace ipusim::scheduler::reduction_test
