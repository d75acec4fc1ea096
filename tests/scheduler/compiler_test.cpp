// The compiled executable: structure, placement, memory plan, errors.
#include "scheduler/compiler.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>

namespace ipusim::scheduler::compiler_test {
namespace {

Workload load(const std::string& name) {
  return loadWorkload(std::string(IPUSIM_SOURCE_DIR) + "/workloads/" + name);
}

const ir::Program& entry(const CompiledWorkload& c) {
  EXPECT_EQ(c.exe.entryPoints.size(), 1u);
  EXPECT_EQ(c.exe.entryPoints[0].name, "train");
  return c.exe.programs.at(c.exe.entryPoints[0].program);
}

TEST(Compiler, WithFeedsRepeatsOneMarkedStep) {
  const CompiledWorkload c = compile(load("mnist_with_feeds.json"));
  const ir::Program& train = entry(c);
  ASSERT_EQ(train.kind, ir::ProgramKind::Repeat);
  EXPECT_EQ(train.count, 10u);
  const ir::Program& step = c.exe.programs.at(train.children.at(0));
  EXPECT_TRUE(step.marksStep);
  // StreamCopy images, StreamCopy labels first; StreamCopy loss last.
  const auto& kids = step.children;
  EXPECT_EQ(c.exe.programs[kids[0]].kind, ir::ProgramKind::StreamCopy);
  EXPECT_EQ(c.exe.programs[kids[0]].stream, c.imagesStream);
  EXPECT_EQ(c.exe.programs[kids[1]].stream, c.labelsStream);
  EXPECT_EQ(c.exe.programs[kids.back()].stream, c.lossStream);
  EXPECT_EQ(c.exe.streams[c.imagesStream].elementsPerCopy, 32u * 784u);
  EXPECT_EQ(c.exe.streams[c.imagesStream].bufferDepth, 3u);
  EXPECT_EQ(c.exe.streams[c.labelsStream].dtype, ir::DType::Int);
  EXPECT_EQ(c.exe.streams[c.lossStream].direction, ir::StreamDirection::DeviceToHost);
  EXPECT_EQ(c.exe.streams[c.lossStream].bufferDepth, 10u);
  EXPECT_NO_THROW(c.exe.validate(c.target.totalTiles()));
  // Every program step and compute set names its layer and op.
  for (const auto& p : c.exe.programs) {
    EXPECT_FALSE(p.debug.layer.empty()) << p.name;
    EXPECT_FALSE(p.debug.op.empty()) << p.name;
  }
  std::set<std::string> layers;
  for (const auto& cs : c.exe.computeSets) layers.insert(cs.debug.layer);
  EXPECT_EQ(layers, (std::set<std::string>{"dense", "dense_1", "loss"}));
  std::printf("ipu2 tutorial: schedule %s, tiles used %u, peak liveness %llu B, tile memory max %llu B mean %.0f B, "
              "%zu compute sets, %zu exchanges, estimated step %llu cycles\n",
              c.report.schedule.c_str(), c.report.tilesUsed, (unsigned long long)c.report.peakLivenessBytes,
              (unsigned long long)c.report.maxTileBytes, c.report.meanTileBytes, c.report.computeSets,
              c.report.exchanges, (unsigned long long)c.report.estimatedStepCycles);
  EXPECT_GT(c.report.tilesUsed, 1u);
  EXPECT_GT(c.report.estimatedStepCycles, 0u);
}

TEST(Compiler, WithoutFeedsOneStepPerRun) {
  const CompiledWorkload c = compile(load("mnist_without_feeds.json"));
  const ir::Program& train = entry(c);
  EXPECT_EQ(train.kind, ir::ProgramKind::Sequence);
  EXPECT_TRUE(train.marksStep);
  EXPECT_EQ(c.stepsPerRun, 1u);
}

TEST(Compiler, OutfeedLastCopiesTheLossAfterTheLoop) {
  Workload w = load("small_synthetic.json");
  w.training.outfeedMode = "LAST";
  const CompiledWorkload c = compile(w);
  const ir::Program& train = entry(c);
  ASSERT_EQ(train.kind, ir::ProgramKind::Sequence);
  ASSERT_EQ(train.children.size(), 2u);
  EXPECT_EQ(c.exe.programs[train.children[0]].kind, ir::ProgramKind::Repeat);
  EXPECT_EQ(c.exe.programs[train.children[1]].stream, c.lossStream);
  EXPECT_TRUE(c.exe.tensors[c.lossTensor].alwaysLive);
}

TEST(Compiler, WeightsHoldGlorotValuesAndLiveWhereTheirMatmulRuns) {
  const CompiledWorkload c = compile(load("small_synthetic.json"));
  ASSERT_EQ(c.weightTensors.size(), 4u);
  const auto& kernel = c.exe.tensors[c.weightTensors[0]];
  EXPECT_EQ(kernel.category, "weights");
  EXPECT_TRUE(kernel.alwaysLive);
  EXPECT_TRUE(kernel.initialValue.empty());  // drawn at load, not stored
  EXPECT_EQ(ir::initialValues(kernel).size(), 64u * 32u);
  // Every tile the forward matmul of dense runs vertices on holds part of its kernel or reads a copy.
  for (const auto& iv : kernel.mapping) EXPECT_NE(iv.address, ir::TileInterval::kUnplaced);
}

TEST(Compiler, NotAlwaysLiveTensorsShareAddressesOnlyWhenDisjointInTime) {
  const CompiledWorkload c = compile(load("small_synthetic.json"));
  // No two always-live tensors overlap on a tile.
  std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> used;
  for (const auto& t : c.exe.tensors) {
    if (!t.alwaysLive) continue;
    for (const auto& iv : t.mapping) used[iv.tile].push_back({iv.address, iv.address + (iv.end - iv.begin) * 4});
  }
  for (auto& [tile, v] : used) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1].second, v[i].first) << "tile " << tile;
  }
  EXPECT_LE(c.report.maxTileBytes, c.target.tile.memoryBytes);
}

// Too big for the chip: decided from the layer shapes before anything is
// built (so in milliseconds, whatever the width).
TEST(Compiler, ModelTooBigForTheChipFailsBeforeBuildingAnything) {
  Workload w = load("small_synthetic.json");
  w.ipu.tiles = 4;
  w.layers[1].units = 100000000;
  try {
    compile(w);
    FAIL() << "no out-of-memory error";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("out of memory: the model cannot fit 4 tiles of " + std::to_string(624 * 1024) + " bytes"),
              std::string::npos) << m;
    EXPECT_NE(m.find("bytes per tile; all 4 tiles are over their capacity, by "), std::string::npos) << m;
    EXPECT_NE(m.find("Largest variables, per tile: dense/kernel (weights) "), std::string::npos) << m;
  }
}

// A conv net's activations count in the up-front check: those the backward
// pass reads (the second conv's input, the pooling's input, the dense
// layer's input) are live together when it starts. The MNIST convnet
// trained by plain SGD: its weights (1.2 M floats), largest gradient and
// stream buffers spread over 16 tiles would fit (about 608 KB of 624 KB a
// tile); with its conv outputs at batch 64 (64 x 26 x 26 x 32 and
// 64 x 24 x 24 x 64 floats and the pooled 64 x 12 x 12 x 64) they do not.
TEST(Compiler, ConvActivationsCountInTheUpFrontMemoryCheck) {
  Workload w = loadWorkload(std::string(IPUSIM_SOURCE_DIR) + "/workloads/mnist_convnet.json");
  w.ipu.tiles = 16;
  w.dataset.batchSize = 64;
  w.optimizer = OptimizerSpec{};  // SGD: no slot variables
  try {
    compile(w);
    FAIL() << "no out-of-memory error";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("out of memory: the model cannot fit 16 tiles"), std::string::npos) << m;
    EXPECT_NE(m.find("Largest variables, per tile: max_pooling2d/input (activations) " +
                     std::to_string(4 * 64 * 24 * 24 * 64 / 16) + " bytes"), std::string::npos) << m;
  }
}

// Fits on average but not once planned: Poplar's kind of summary, from the
// memory plan (tiles over, total excess, the worst tiles and what fills them).
TEST(Compiler, OverfullTilesGetAPoplarStyleSummary) {
  Workload w = load("small_synthetic.json");
  w.ipu.tiles = 2;
  w.layers[1].units = 2000;
  try {
    compile(w);
    FAIL() << "no out-of-memory error";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("Out of memory in the compiled workload: cannot fit all variable data onto "), std::string::npos) << m;
    EXPECT_NE(m.find(" of 2 tiles (tiles only have " + std::to_string(624 * 1024) + " bytes of memory); "),
              std::string::npos) << m;
    EXPECT_NE(m.find("\n  Out of memory on tile "), std::string::npos) << m;
    EXPECT_NE(m.find("largest variables:"), std::string::npos) << m;
  }
  w.allowOutOfMemory = true;
  const CompiledWorkload c = compile(w);
  EXPECT_GT(c.report.maxTileBytes, 624u * 1024u);
  EXPECT_GE(c.report.tilesOverCapacity, 1u);
}

// The summary says what fills the worst tile at its peak and names the way
// out for each large share: here a weight-gradient product's temporaries
// (a lower available_memory_proportion, which then fits) and the weights.
TEST(Compiler, TheOutOfMemorySummaryNamesTheWayOutForWhatIsLiveAtThePeak) {
  const std::string path = ::testing::TempDir() + "compiler_test_wide_dense.json";
  const auto write = [&](double proportion) {
    std::ofstream(path) << R"({"name": "wide", "dataset": {"format": "synthetic", "batch_size": 64,
      "input_shape": [784], "classes": 10, "examples": 640},
      "model": {"layers": [{"type": "dense", "units": 2000, "activation": "relu"},
                           {"type": "dense", "units": 10, "activation": "softmax"}]},
      "optimizer": {"type": "sgd", "learning_rate": 0.01}, "training": {"steps": 10},
      "ipu": {"arch": "ipu2", "tiles": 32, "available_memory_proportion": )"
                        << proportion << "}}";
  };
  write(0.6);
  try {
    compile(loadWorkload(path));
    FAIL() << "no out-of-memory error";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("\nTile 0 holds always live: activations 8, stream_buffers 6288, weights 198816; at its peak, "),
              std::string::npos) << m;
    EXPECT_NE(m.find(": temporaries 328352, gradients 212000; largest: 'dense/kernel_grad' "
                     "(gradients, 196000 bytes), 'dense/kernel_grad/partials' (temporaries, 196000 bytes)"),
              std::string::npos) << m;
    EXPECT_NE(m.find("\nReduce the model or the batch, a lower ipu.available_memory_proportion (now 0.6: the share "
                     "of a tile a matmul or convolution plan may use for its operand copies and partials; 328352 "
                     "bytes of theirs are live at the peak, the largest 'dense/kernel_grad/partials'), more "
                     "IPUs for the layers (model shards or pipeline stages: the weights take 198816 bytes of the "
                     "tile, always live), "),
              std::string::npos) << m;
  }
  write(0.3);
  EXPECT_LE(compile(loadWorkload(path)).report.maxTileBytes, 638976u);
  std::remove(path.c_str());
}

TEST(Compiler, EverySchedulingAlgorithmCompiles) {
  Workload w = load("mnist_with_feeds.json");
  for (const char* a : {"post_order", "look_ahead", "shortest_path", "clustering", "choose_best"}) {
    w.scheduling = a;
    const CompiledWorkload c = compile(w);
    EXPECT_NO_THROW(c.exe.validate(c.target.totalTiles())) << a;
  }
}

}  // namespace
}  // namespace ipusim::scheduler::compiler_test
