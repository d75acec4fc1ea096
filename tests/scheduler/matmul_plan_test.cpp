// Matmul planning: gathered 2-D blocks with the reduction whole, and the
// exchange cost of the gathers that keeps the planner from shredding a matmul.
#include "model/codelets/codelet.hpp"
#include "model/hardware/tile.hpp"
#include "scheduler/compiler.hpp"
#include "scheduler/matmul_plan.hpp"

#include <gtest/gtest.h>

namespace ipusim::scheduler {
namespace {

model::Target ipu2(std::uint32_t tiles) {
  model::Target t = model::Target::preset("ipu2");
  t.set("tile.tilesPerIpu", std::to_string(tiles));
  return t;
}

std::uint64_t budget(const model::Target& t) { return t.tile.memoryBytes / 2; }

// The tutorial's weight gradient dW1 = X^T . dZ1 (X 32x784, dZ1 32x128).
MatMulShape weightGradient(std::uint64_t sourceTiles) {
  MatMulShape s;
  s.m = 784, s.k = 32, s.n = 128, s.transposeA = true;
  s.aSourceTiles = s.bSourceTiles = sourceTiles;
  return s;
}

TEST(MatMulPlan, WeightGradientKeepsTheReductionWholeInGatheredBlocks) {
  for (std::uint32_t tiles : {64u, 1472u}) {
    const model::Target t = ipu2(tiles);
    const MatMulPlan p = planMatMul(weightGradient(tiles), t, tiles, budget(t));
    EXPECT_TRUE(p.gathered) << tiles << " tiles";
    EXPECT_EQ(p.pk, 1u) << tiles << " tiles";
    EXPECT_FALSE(p.rowVertices || p.colVertices);
    EXPECT_LE(p.tiles(), tiles);
    EXPECT_TRUE(p.fits);
  }
}

// The gathered estimate, term by term: one MatMulPartial per tile, one
// gather phase bound by the busiest receiver or sender, and (blocks not
// contiguous in the output) one more phase placing the output.
TEST(MatMulPlan, GatheredEstimateCountsComputeGatherAndPlacement) {
  const model::Target t = ipu2(4);
  MatMulShape s;
  s.m = 8, s.k = 16, s.n = 8;
  s.aSourceTiles = 4, s.bSourceTiles = 4;
  const MatMulPlan p = planMatMul(s, t, 4, budget(t));
  ASSERT_TRUE(p.gathered);
  const std::uint64_t mb = 8 / p.pm, nb = 8 / p.pn;
  const auto& codelet = model::CodeletRegistry::instance().get("MatMulPartial");
  const ir::Cycles vertex = codelet.cycles(
      {{mb * 16, 16 * nb, mb * nb},
       model::orderedParams(codelet, {{"m", double(mb)}, {"k", 16}, {"n", double(nb)}, {"transposeA", 0},
                                      {"transposeB", 0}, {"accumulate", 0}})},
      t);
  std::uint64_t expected = model::hardware::tileComputeCycles({}, {vertex}, t.tile);
  const std::uint64_t received = (mb * 16 + 16 * nb) * 4;
  const std::uint64_t sent = (8 * 16 * 4 * p.pn + 3) / 4 + (16 * 8 * 4 * p.pm + 3) / 4;
  const std::uint64_t bpc = t.exchange.bytesPerCycle;
  expected += (std::max(received, sent) + bpc - 1) / bpc + t.exchange.latencyCycles + t.sync.internalCycles;
  if (p.pn > 1 && mb > 1) expected += (mb * nb * 4 + bpc - 1) / bpc + t.exchange.latencyCycles + t.sync.internalCycles;
  EXPECT_EQ(p.estimatedCycles, expected) << "pm " << p.pm << " pn " << p.pn;
}

// An operand on one tile must be sent once per block reading it: the
// gathered estimate grows with that (here enough for another plan to win).
TEST(MatMulPlan, ASingleSourceTileMakesTheGatherSenderBound) {
  const model::Target t = ipu2(1472);
  const MatMulPlan spread = planMatMul(weightGradient(1472), t, 1472, budget(t));
  const MatMulPlan single = planMatMul(weightGradient(1), t, 1472, budget(t));
  EXPECT_GT(single.estimatedCycles, spread.estimatedCycles);
  if (single.gathered) {  // every byte of X (32x784 floats) to each of the pn column blocks
    EXPECT_GE(single.estimatedCycles, 32u * 784u * 4u * single.pn / t.exchange.bytesPerCycle);
  }
}

// The compiled tutorial at 64 tiles: the weight gradient dW1 is no longer
// split into single-MAC vertices (it was 3.2 million, reduced from 100,352
// partial regions): at most one vertex per tile, its operands gathered by
// one multi-region Copy, no partial sums.
TEST(MatMulPlan, TutorialAt64TilesKeepsTheWeightGradientWhole) {
  Workload w = loadWorkload(std::string(IPUSIM_SOURCE_DIR) + "/workloads/mnist_with_feeds.json");
  w.ipu.tiles = 64;
  const CompiledWorkload c = compile(w);
  std::size_t matmulVertices = 0, kernelGradVertices = 0;
  for (const auto& cs : c.exe.computeSets)
    for (const auto& v : cs.vertices) {
      matmulVertices += v.codelet == "MatMulPartial";
      kernelGradVertices += cs.name == "dense/kernel_grad";
    }
  EXPECT_GE(kernelGradVertices, 1u);
  EXPECT_LE(kernelGradVertices, 64u);
  EXPECT_LE(matmulVertices, 5u * 64u * 4u);  // five matmuls, a few vertices per tile at most
  std::size_t gatherRegions = 0;
  for (const auto& p : c.exe.programs)
    if (p.kind == ir::ProgramKind::Copy && p.name == "dense/kernel_grad/gather_operands") gatherRegions = p.regions.size();
  EXPECT_GT(gatherRegions, 1u);
  for (const auto& t : c.exe.tensors) EXPECT_NE(t.name, "dense/kernel_grad/partials");
  EXPECT_NO_THROW(c.exe.validate(c.target.totalTiles()));
}

}  // namespace
}  // namespace ipusim::scheduler
