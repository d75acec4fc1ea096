// A matrix product computed whole (the default, model/hardware/fused_matmul.hpp)
// gives the tile program's results bit for bit, and the same cycles: each
// run is compared with the same run under --tile-by-tile. The runs cover
// k sliced over tiles, both transposed operands (the tutorial's weight and
// input gradients), half precision, a product per replica, attention's
// grouped products, and a pipeline
// (whose products the loader leaves to the tile program). The fused
// runs put every product on the pool (IPUSIM_WORKER_CHOICE=always, 2
// threads), so the bands computed apart are compared too.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace ipusim::test::test_fused_matmuls {
namespace {

struct Trained {
  std::vector<std::string> losses;
  std::string simulatedTime;  // "0.439 s (583701560 cycles)"
};

Trained train(const std::string& workloadAndFlags, bool tileByTile) {
  ScratchDir dir(tileByTile ? "tile-by-tile" : "fused");
  const std::string options = "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() + "\"}";
  const std::string environment = tileByTile ? "" : "IPUSIM_WORKER_CHOICE=always ";
  const auto run = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + environment +
                              "POPLAR_ENGINE_OPTIONS=" + quote(options) + " " + ipusimBinary() + " run " +
                              workloadAndFlags + (tileByTile ? " --tile-by-tile --threads 1" : " --threads 2"));
  EXPECT_EQ(run.exitCode, 0) << run.output;
  Trained t;
  t.losses = profileLosses(dir.path() / "profile.pop");
  std::smatch m;
  if (std::regex_search(run.output, m, std::regex("simulated time +([^\\n]+)"))) t.simulatedTime = m[1];
  return t;
}

void expectBitForBit(const std::string& workloadAndFlags, std::size_t steps) {
  const Trained fused = train(workloadAndFlags, false);
  const Trained tiles = train(workloadAndFlags, true);
  ASSERT_EQ(fused.losses.size(), steps);
  ASSERT_EQ(tiles.losses.size(), steps);
  for (std::size_t step = 0; step < steps; ++step)
    ASSERT_EQ(fused.losses[step], tiles.losses[step]) << "step " << step;
  EXPECT_FALSE(fused.simulatedTime.empty());
  EXPECT_EQ(fused.simulatedTime, tiles.simulatedTime);
}

TEST(FusedMatMuls, TheTutorialTrainsBitForBitAsTileByTile) {
  expectBitForBit("workloads/mnist_with_feeds.json --steps 200", 200);
}

TEST(FusedMatMuls, HalfPrecisionTrainsBitForBitAsTileByTile) {
  expectBitForBit("workloads/mnist_with_feeds.json --steps 100 --workload-set model.dtype=float16", 100);
}

TEST(FusedMatMuls, ReplicasTrainBitForBitAsTileByTile) {
  expectBitForBit("workloads/mnist_replicated_4ipus.json --steps 20", 20);
}

// Attention's batched products (a group per example and head) computed
// whole, group by group: an encoder block and a causal cross-attention, and
// a language model's decoder block.
TEST(FusedMatMuls, AttentionTrainsBitForBitAsTileByTile) {
  expectBitForBit("bench/torch/attention.json --steps 20", 20);
  expectBitForBit("bench/torch/language_model.json --steps 20", 20);
}

TEST(FusedMatMuls, PipelinesTrainBitForBitAsTileByTile) {
  // A pipeline runs the first mini-batch's programs from its slots, not from
  // its ops' Sequences: those products are used twice and run tile by tile;
  // the results must not change either way.
  expectBitForBit("workloads/mnist_pipelined_2ipus.json --steps 32", 32);
}

}  // namespace
}  // namespace ipusim::test::test_fused_matmuls
