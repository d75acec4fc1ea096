// Each insights rule on a profile that triggers it and on one that does not.
#include "profiler/analysis/insights.hpp"
#include "test_analysis_profile.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>

namespace ipusim::profiler::analysis::test_analysis_insights {
namespace {

using testing_profiles::slice;
using testing_profiles::streamCopy;
using testing_profiles::temporaryPath;

// One IPU of 8 tiles (1000 B each); ten runs of one step, 1000 cycles apart
// from 1100 (100 cycles of host overhead between runs); run 0 captured:
// a StreamCopy whose Begin lasts `beginCycles`, then compute to the end of the run.
struct Shape {
  std::int64_t beginCycles = 50;
  std::int64_t busyTiles = 8;      // tiles with compute cycles in the compute phase
  std::int64_t fullestBytes = 500;
  bool idleDevice = false;         // no compute at all: the device idles after the copy
  bool feeds = false;              // true: 10 steps per run with infeed/outfeed (meta)
  std::int64_t stepStart = 0;      // the captured run's step slice covers [stepStart, 1000)
  std::int64_t recomputeCycles = 0;  // the compute's last cycles: program dense/recompute/matmul
  std::int64_t optimizerBytes = 0;   // always-live optimizer state on the fullest tile (3)
  // Of those, the step counter's and a learning rate's (half each) on every
  // tile; the rest is a slot variable's (tensors "iterations",
  // "optimizer/learning_rate", "dense/kernel/m").
  std::int64_t optimizerScalarBytes = 0;
  std::int64_t replicas = 0;         // meta replicas (0: not written)
  bool sharded = false;              // an all_gather Sequence follows the updates
  bool pipelined = false;            // the step is a training/pipeline Sequence
  std::string task;                  // meta task (empty: not written)
  std::int64_t activationBytes = 0;  // not-always-live activations on the fullest tile (3)
  std::int64_t autoCheckpoints = -1;  // meta recompute_auto_checkpoints (-1: not written)
};

std::string writeProfile(const std::string& name, const Shape& shape) {
  const std::string path = temporaryPath(name);
  traces::ProfileWriter w(path);
  w.setMeta("arch", "ipu2");
  w.setMeta("num_ipus", "1");
  w.setMeta("tiles_per_ipu", "8");
  w.setMeta("tile_memory_bytes", "1000");
  w.setMeta("clock_hz", "1000000000");
  w.setMeta("steps_per_execution", shape.feeds ? "10" : "1");
  w.setMeta("feeds", shape.feeds ? "true" : "false");
  const auto engine = w.addTrack({0, -1, "engine", "Engine::run", -1, -1, 0});
  const auto stream = w.addTrack({0, -1, "stream", "StreamCopy", -1, -1, 20});
  const auto ipu = w.addTrack({0, -1, "ipu", "IPU 0", 0, -1, 30});
  const auto bsp = w.addTrack({0, ipu, "bsp", "IPU 0 BSP", 0, -1, 32});
  for (std::int64_t r = 0; r < 10; ++r)
    w.addRun({r, 0, "train", r * 1100, r * 1100 + 1000, shape.feeds ? 10 : 1, r == 0});
  w.addProgram({0, -1, "Sequence", "step", "training", "step", 0});
  w.addProgram({1, 0, "Execute", "dense/matmul", "dense", "matmul", 0});
  w.addPhase({1, "compute", "dense/matmul", 1, -1});
  w.addProgram({2, 0, "Execute", "dense/recompute/matmul", "dense", "recompute/matmul", 0});
  w.addPhase({2, "compute", "dense/recompute/matmul", 2, -1});
  const auto run = slice(w, engine, 0, 0, 1000, "Engine::run #0", "engine_run");
  slice(w, engine, 0, shape.stepStart, 1000 - shape.stepStart, "Step 0", "step", run, 1);
  streamCopy(w, stream, 0, "images", 0, shape.beginCycles, 10, 0, 64);
  if (!shape.idleDevice) {
    traces::SliceRow compute;
    compute.trackId = bsp;
    compute.runId = 0;
    compute.ts = shape.beginCycles + 10;
    compute.dur = 1000 - compute.ts - shape.recomputeCycles;
    compute.name = "dense/matmul";
    compute.category = "compute";
    compute.programId = 1;
    compute.phaseId = 1;
    w.addSlice(compute);
    for (std::int64_t tile = 0; tile < shape.busyTiles; ++tile) w.addTilePhase({1, 0, tile, compute.dur, 1});
    if (shape.recomputeCycles > 0) {
      traces::SliceRow recompute = compute;
      recompute.ts = compute.ts + compute.dur;
      recompute.dur = shape.recomputeCycles;
      recompute.name = "dense/recompute/matmul";
      recompute.programId = 2;
      recompute.phaseId = 2;
      w.addSlice(recompute);
      for (std::int64_t tile = 0; tile < shape.busyTiles; ++tile) w.addTilePhase({2, 0, tile, recompute.dur, 1});
    }
  }
  w.addTileMemory({0, 3, "weights", true, shape.fullestBytes});
  if (shape.optimizerBytes) w.addTileMemory({0, 3, "optimizer", true, shape.optimizerBytes});
  if (shape.optimizerBytes > shape.optimizerScalarBytes)
    w.addTensor({0, "dense/kernel/m", "optimizer", true, shape.optimizerBytes - shape.optimizerScalarBytes, 1, "dense",
                 "kernel_update"});
  if (shape.optimizerScalarBytes) {
    w.addTensor({1, "iterations", "optimizer", true, shape.optimizerScalarBytes / 2 * 8, 8, "training", "increment"});
    w.addTensor({2, "optimizer/learning_rate", "optimizer", true, shape.optimizerScalarBytes / 2 * 8, 8, "optimizer",
                 "learning_rate"});
  }
  if (shape.replicas) w.setMeta("replicas", std::to_string(shape.replicas));
  if (shape.sharded) w.addProgram({3, 0, "Sequence", "all_gather", "training", "all_gather", 1});
  if (shape.pipelined) w.addProgram({4, 0, "Sequence", "pipeline", "training", "pipeline", 0});
  if (!shape.task.empty()) w.setMeta("task", shape.task);
  if (shape.autoCheckpoints >= 0) w.setMeta("recompute_auto_checkpoints", std::to_string(shape.autoCheckpoints));
  if (shape.activationBytes) w.addTileMemory({0, 3, "activations", false, shape.activationBytes});
  w.addTileMemory({0, 4, "weights", true, 100});
  w.commit();
  return path;
}

ProfileFacts factsOf(const std::string& name, const Shape& shape) {
  const traces::ProfileReader reader(writeProfile(name, shape));
  return measureProfileFacts(reader);
}

TEST(InsightsHostBound, FiresWhenTheIpuWaitsForTheHost) {
  Shape s;
  s.beginCycles = 600;
  const auto insight = hostBoundInsight(factsOf("host.pop", s));
  ASSERT_TRUE(insight);
  EXPECT_EQ(insight->finding, "the IPU waits for the host 60.0% of the time");
  // Without feeds: turn them on; 10 runs of 1 step become 1 run of 10. Each
  // run costs 90 cycles between runs (900 over 10), nothing outside its step
  // (the step spans it) and its first Begin's 600 (no other Begin to compare
  // with: median 0): 9 runs x 690 = 6210 cycles saved.
  EXPECT_NE(insight->knob.find("training.feeds = true"), std::string::npos) << insight->knob;
  EXPECT_EQ(insight->figures["outside_runs_cycles"], 900);
  EXPECT_EQ(insight->figures["saved_cycles"], 6210);
  EXPECT_NE(insight->gain.find("saves about 6.210 us per 10 steps"), std::string::npos) << insight->gain;
}

TEST(InsightsHostBound, WithFeedsTheKnobIsTenTimesTheStepsPerExecution) {
  Shape s;
  s.beginCycles = 600;
  s.feeds = true;
  s.stepStart = 100;
  const auto insight = hostBoundInsight(factsOf("host-feeds.pop", s));
  ASSERT_TRUE(insight);
  EXPECT_EQ(insight->knob, "raise steps_per_execution (10 -> 100)");
  // 10 runs of 10 steps become 1 run of 100: each run costs 90 cycles between
  // runs, 100 inside it before its steps start and its first Begin's 600:
  // 9 runs x 790 saved.
  EXPECT_EQ(insight->figures["saved_cycles"], 7110);
  EXPECT_NE(insight->gain.find("saves about 7.110 us per 100 steps"), std::string::npos) << insight->gain;
}

TEST(InsightsHostBound, QuietWhenTheDeviceComputes) {
  EXPECT_FALSE(hostBoundInsight(factsOf("device.pop", {})));
}

TEST(InsightsDeviceBound, FiresWhenTheDeviceIsBusyAndNamesTheOp) {
  const auto insight = deviceBoundInsight(factsOf("device.pop", {}));
  ASSERT_TRUE(insight);
  EXPECT_NE(insight->finding.find("the device is busy 94.0% of the time (compute 94.0%"), std::string::npos)
      << insight->finding;
  EXPECT_NE(insight->knob.find("dense/matmul"), std::string::npos) << insight->knob;
}

TEST(InsightsDeviceBound, QuietWhenTheHostIsTheBottleneckOrTheDeviceIdles) {
  Shape host;
  host.beginCycles = 600;
  EXPECT_FALSE(deviceBoundInsight(factsOf("host.pop", host)));
  Shape idle;
  idle.idleDevice = true;
  EXPECT_FALSE(deviceBoundInsight(factsOf("idle.pop", idle)));
}

TEST(InsightsTileBalance, FiresWhenOneTileOfEightWorks) {
  Shape s;
  s.busyTiles = 1;
  const auto insight = tileBalanceInsight(factsOf("unbalanced.pop", s));
  ASSERT_TRUE(insight);
  EXPECT_NE(insight->finding.find("tile balance 12.5%"), std::string::npos) << insight->finding;
}

TEST(InsightsTileBalance, QuietWhenAllTilesWork) {
  EXPECT_FALSE(tileBalanceInsight(factsOf("balanced.pop", {})));
}

TEST(InsightsTileMemory, FiresOnANearlyFullTile) {
  Shape s;
  s.fullestBytes = 970;
  const auto insight = tileMemoryInsight(factsOf("full.pop", s));
  ASSERT_TRUE(insight);
  EXPECT_EQ(insight->finding, "tile 3 is 97.0% full (970 of 1000 B)");
}

// With replicas, the optimizer state on the fullest tile is named with what
// sharding it saves there (R - 1 of R parts) and whether the tile then fits.
TEST(InsightsTileMemory, NamesShardingTheOptimizerStateOverTheReplicas) {
  Shape s;
  s.fullestBytes = 700;
  s.optimizerBytes = 400;  // 1100 of 1000 B: 110% full
  s.replicas = 4;
  const auto insight = tileMemoryInsight(factsOf("replicas.pop", s));
  ASSERT_TRUE(insight);
  EXPECT_NE(insight->knob.find("shard the optimizer state over the 4 replicas (training.replicated_optimizer_state_sharding: "
                               "true): its 400 B there fall to 1/4"),
            std::string::npos)
      << insight->knob;
  EXPECT_NE(insight->gain.find("without 300 B of optimizer state that tile would fit"), std::string::npos) << insight->gain;
  EXPECT_EQ(insight->figures.at("optimizer_state_saving_bytes"), 300);
  s.sharded = true;  // already sharded: nothing more to name
  const auto sharded = tileMemoryInsight(factsOf("sharded.pop", s));
  ASSERT_TRUE(sharded);
  EXPECT_EQ(sharded->knob.find("optimizer state"), std::string::npos) << sharded->knob;
}

// Found by the twelfth adversarial pass of issue 33: the rule counted the
// step counter and the per-tile learning rate (category "optimizer" too) as
// state that sharding or Streaming Memory would take off the tile: an SGD
// with a learning-rate schedule, which keeps no slot variable, was told to
// offload "its 8 B" (which the workload then refuses) or shard them, and
// Adam's state was counted with its step counter.
TEST(InsightsTileMemory, NamesOnlyTheSlotVariablesAsStateToShardOrOffload) {
  Shape s;
  s.fullestBytes = 995;
  s.optimizerBytes = 8;  // 1003 of 1000 B: the step counter and the learning rate alone
  s.optimizerScalarBytes = 8;
  for (std::int64_t replicas : {0, 2}) {
    s.replicas = replicas;
    const auto insight = tileMemoryInsight(factsOf("schedule" + std::to_string(replicas) + ".pop", s));
    ASSERT_TRUE(insight);
    EXPECT_EQ(insight->knob.find("optimizer state"), std::string::npos) << insight->knob;
    EXPECT_EQ(insight->figures.count("optimizer_state_bytes"), 0u);
  }
  s.fullestBytes = 700;
  s.optimizerBytes = 404;  // 400 B of slot variables and the 4 B step counter
  s.optimizerScalarBytes = 4;
  s.replicas = 4;
  const auto insight = tileMemoryInsight(factsOf("adam.pop", s));
  ASSERT_TRUE(insight);
  EXPECT_NE(insight->knob.find("its 400 B there fall to 1/4"), std::string::npos) << insight->knob;
  EXPECT_EQ(insight->figures.at("optimizer_state_saving_bytes"), 300);
}

TEST(InsightsTileMemory, NamesStreamingMemoryForOneReplica) {
  Shape s;
  s.fullestBytes = 900;
  s.optimizerBytes = 300;  // 1200 of 1000 B
  const auto insight = tileMemoryInsight(factsOf("one.pop", s));
  ASSERT_TRUE(insight);
  EXPECT_NE(insight->knob.find("training.offload_optimizer_state: true): its 300 B there"), std::string::npos)
      << insight->knob;
  EXPECT_NE(insight->gain.find("without 300 B of optimizer state that tile would fit"), std::string::npos) << insight->gain;
}

// A fit that recomputes nothing is told of recomputation, the key its
// model takes (a pipeline's mode, else checkpoints), with the bytes it acts on.
TEST(InsightsTileMemory, NamesRecomputationForAFitKeepingItsActivations) {
  Shape s;
  s.fullestBytes = 700;
  s.activationBytes = 400;  // 1100 of 1000 B
  s.task = "fit";
  const auto plain = tileMemoryInsight(factsOf("keeping.pop", s));
  ASSERT_TRUE(plain);
  EXPECT_NE(plain->knob.find("; or recompute activations for the backward pass instead of keeping them "
                             "(training.recompute_checkpoints: \"auto\"): part of the tile's 400 B of activations, "
                             "gradients and temporaries at its peak, for forward ops run again"),
            std::string::npos)
      << plain->knob;
  s.pipelined = true;
  const auto pipelined = tileMemoryInsight(factsOf("keeping-pipelined.pop", s));
  ASSERT_TRUE(pipelined);
  EXPECT_NE(pipelined->knob.find("(pipeline.recomputation_mode: \"Auto\")"), std::string::npos) << pipelined->knob;
  s.recomputeCycles = 100;  // already recomputing: nothing more to name
  const auto recomputing = tileMemoryInsight(factsOf("recomputing.pop", s));
  ASSERT_TRUE(recomputing);
  EXPECT_EQ(recomputing->knob.find("recompute"), std::string::npos) << recomputing->knob;
  Shape predict = s;
  predict.recomputeCycles = 0;
  predict.task = "predict";  // no backward pass
  const auto inference = tileMemoryInsight(factsOf("predict.pop", predict));
  ASSERT_TRUE(inference);
  EXPECT_EQ(inference->knob.find("recompute"), std::string::npos) << inference->knob;
}

// "auto" finds no checkpoint in a model without two layers to cut at (a
// 2-layer MLP): where the profile says so, recomputation is not offered
// (found by the fourteenth adversarial pass: it was, and the model refuses
// "auto"); where "auto" finds some, it is.
TEST(InsightsTileMemory, NamesRecomputationOnlyWhereAutoFindsCheckpoints) {
  Shape s;
  s.fullestBytes = 700;
  s.activationBytes = 400;
  s.task = "fit";
  s.autoCheckpoints = 0;
  const auto none = tileMemoryInsight(factsOf("auto-none.pop", s));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->knob.find("recompute"), std::string::npos) << none->knob;
  s.autoCheckpoints = 2;
  const auto some = tileMemoryInsight(factsOf("auto-two.pop", s));
  ASSERT_TRUE(some);
  EXPECT_NE(some->knob.find("(training.recompute_checkpoints: \"auto\")"), std::string::npos) << some->knob;
  s.autoCheckpoints = 0;
  s.pipelined = true;  // a pipeline's mode recomputes its stages whatever "auto" finds
  const auto pipelined = tileMemoryInsight(factsOf("auto-none-pipelined.pop", s));
  ASSERT_TRUE(pipelined);
  EXPECT_NE(pipelined->knob.find("(pipeline.recomputation_mode: \"Auto\")"), std::string::npos) << pipelined->knob;
}

TEST(InsightsTileMemory, QuietWithHeadroom) {
  EXPECT_FALSE(tileMemoryInsight(factsOf("roomy.pop", {})));
}

TEST(InsightsRecomputation, StatesTheShareOfTheRecomputedOps) {
  Shape s;
  s.recomputeCycles = 235;  // of the 940 busy cycles: 25%
  const auto insight = recomputationInsight(factsOf("recomputed.pop", s));
  ASSERT_TRUE(insight);
  EXPECT_EQ(insight->finding.rfind("recomputation takes 25.0% of the device's busy time (235 cycles a step, 1 op run "
                                   "again for the backward pass; the largest dense/recompute/matmul)", 0),
            0u)
      << insight->finding;
  EXPECT_NE(insight->knob.find("training.recompute_checkpoints"), std::string::npos) << insight->knob;
  EXPECT_EQ(insight->knob.find("pipeline.recomputation_mode"), std::string::npos) << insight->knob;
}

// A pipeline's recomputation is its recomputation mode's: the knob names it.
TEST(InsightsRecomputation, NamesThePipelinesRecomputationMode) {
  Shape s;
  s.recomputeCycles = 235;
  s.pipelined = true;
  const auto insight = recomputationInsight(factsOf("pipelined.pop", s));
  ASSERT_TRUE(insight);
  EXPECT_NE(insight->knob.find("with pipeline.recomputation_mode \"RecomputeAndBackpropagateInterleaved\"), or "
                               "recompute nothing (no pipeline.recomputation_mode)"),
            std::string::npos)
      << insight->knob;
}

TEST(InsightsRecomputation, QuietWithoutRecomputedOps) {
  EXPECT_FALSE(recomputationInsight(factsOf("plain.pop", {})));
}

TEST(Insights, HeaviestFirst) {
  Shape s;
  s.beginCycles = 600;
  s.fullestBytes = 970;
  const auto all = findInsights(factsOf("both.pop", s));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].rule, "tile_memory");
  EXPECT_EQ(all[1].rule, "host_bound");
}

}  // namespace
}  // namespace ipusim::profiler::analysis::test_analysis_insights
