// Sharding (model.layers[i].shard, as ipu_shard): layers on different IPUs,
// activations and gradients crossing the IPU-Links; trains as unsharded.
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ipusim::testing::sharding_test {
namespace {

// small_synthetic: flatten, dense (shard 0), dense_1 (shard 1).
scheduler::Workload sharded(std::uint32_t numIpus) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/small_synthetic.json"));
  w.layers.back().shard = 1;
  w.ipu.numIpus = numIpus;
  return w;
}

void expectMatchesUnsharded(const TrainingLosses& r, std::uint64_t steps) {
  ASSERT_EQ(r.simulated.size(), steps);
  for (std::size_t s = 0; s < steps; ++s)
    EXPECT_NEAR(r.simulated[s], r.reference[s], 1e-4 * std::fabs(r.reference[s])) << "step " << s;
  for (std::size_t t = 0; t < r.referenceWeights.size(); ++t)
    for (std::size_t i = 0; i < r.referenceWeights[t].size(); ++i)
      ASSERT_NEAR(r.simulatedWeights[0][t][i], r.referenceWeights[t][i], 1e-5 + 1e-4 * std::fabs(r.referenceWeights[t][i]))
          << "tensor " << t << " [" << i << "]";
}

TEST(Sharding, TwoShardsTrainAsOneIpu) { expectMatchesUnsharded(runTraining(sharded(2), 20), 20); }

TEST(Sharding, TwoReplicasOfTwoShardsTrainAsOneIpuWithTheGlobalBatch) {
  expectMatchesUnsharded(runTraining(sharded(4), 20), 20);
}

TEST(Sharding, EachLayersWeightsLiveOnItsShardsIpu) {
  const scheduler::CompiledWorkload c = scheduler::compile(sharded(2));
  ASSERT_EQ(c.weightTensors.size(), 4u);  // kernel, bias per dense layer
  for (std::size_t i = 0; i < 4; ++i)
    for (const ir::TileInterval& iv : c.exe.tensors[c.weightTensors[i]].mapping)
      EXPECT_EQ(c.target.ipuOf(iv.tile), i < 2 ? 0u : 1u) << i;
  std::size_t crossing = 0;  // activations forward, gradients backward
  for (const auto& p : c.exe.programs)
    if (p.kind == ir::ProgramKind::Copy)
      for (const ir::CopyRegion& r : ir::copyRegions(p))
        crossing += c.target.ipuOf(c.exe.tensors[r.src.tensor].mapping.front().tile) !=
                    c.target.ipuOf(c.exe.tensors[r.dst.tensor].mapping.front().tile);
  EXPECT_GE(crossing, 2u);
}

// The elements Copy programs move from one IPU to another.
std::uint64_t elementsCrossingIpus(const scheduler::CompiledWorkload& c) {
  auto ipuOf = [&](const ir::TensorRef& ref, std::uint64_t element) {
    for (const ir::TileInterval& iv : c.exe.tensors[ref.tensor].mapping)
      if (element >= iv.begin && element < iv.end) return c.target.ipuOf(iv.tile);
    ADD_FAILURE() << "an element outside its tensor's mapping";
    return ~0u;
  };
  std::uint64_t crossing = 0;
  for (const auto& p : c.exe.programs)
    if (p.kind == ir::ProgramKind::Copy)
      for (const ir::CopyRegion& r : ir::copyRegions(p))
        for (std::uint64_t row = 0; row < r.rows; ++row)
          for (std::uint64_t e = 0; e < r.src.size(); ++e)
            crossing += ipuOf(r.src, r.src.begin + row * r.srcStride + e) != ipuOf(r.dst, r.dst.begin + row * r.dstStride + e);
  return crossing;
}

// A tensor read on another shard crosses the IPU-Links once, into a copy
// its readers there share (as Poplar copies between shards), not once per
// reading tile's gather: here the hidden activation forward (read by the
// product and the kernel's gradient) and its gradient backward.
TEST(Sharding, EachBoundaryTensorCrossesTheLinksOnce) {
  nlohmann::json j = {{"dataset", {{"format", "synthetic"}, {"batch_size", 4}, {"input_shape", {16}}}},
                      {"model", {{"layers", {{{"type", "dense"}, {"units", 8}, {"activation", "relu"}},
                                             {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}, {"shard", 1}}}}}},
                      {"ipu", {{"num_ipus", 2}, {"tiles", 16}}}};
  const scheduler::CompiledWorkload c = scheduler::compile(scheduler::parseWorkload(j, "shards.json"));
  EXPECT_EQ(elementsCrossingIpus(c), 2u * 4 * 8);
}

TEST(Sharding, NumIpusNotAMultipleOfTheShardsNamesTheKey) {
  nlohmann::json j = {{"dataset", {{"format", "synthetic"}}},
                      {"model", {{"layers", {{{"type", "dense"}, {"units", 8}, {"activation", "relu"}},
                                             {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}, {"shard", 1}}}}}},
                      {"ipu", {{"num_ipus", 3}}}};
  try {
    scheduler::parseWorkload(j, "shards.json");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("shards.json: ipu.num_ipus: 3 is not a multiple of the 2 IPUs one replica needs"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::testing::sharding_test
