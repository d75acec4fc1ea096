// Recomputation in a pipeline (pipeline.recomputation_mode, TF's
// RecomputationMode): the modes each schedule takes, what a stage keeps per
// mini-batch in flight, where the recomputed ops run, and training as the
// reference does (the bit-for-bit comparison with the same pipeline keeping
// every activation is tests/e2e/test_pipeline_recomputation_results.cpp).
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/graph/schedule.hpp"
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/models/memory_estimate.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <stdexcept>

namespace ipusim::testing::pipeline_recomputation_test {
namespace {

using namespace scheduler;

// Three relu layers a, b, c on stage 0 and the softmax d on stage 1, two
// IPUs: stage 0's activations are what a mini-batch in flight keeps.
nlohmann::json pipelinedChain(const std::string& schedule, const nlohmann::json& mode = nullptr) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "pipelined_chain",
    "dataset": {"format": "synthetic", "batch_size": 16, "shuffle_seed": 7, "features": 32, "classes": 10,
                "examples": 128},
    "model": {"layers": [
      {"type": "dense", "units": 64, "activation": "relu", "name": "a", "stage": 0},
      {"type": "dense", "units": 64, "activation": "relu", "name": "b", "stage": 0},
      {"type": "dense", "units": 64, "activation": "relu", "name": "c", "stage": 0},
      {"type": "dense", "units": 10, "activation": "softmax", "name": "d", "stage": 1}]},
    "optimizer": {"type": "sgd", "learning_rate": 0.05},
    "training": {"steps": 8, "steps_per_execution": 8},
    "ipu": {"arch": "ipu2", "tiles": 16, "num_ipus": 2}, "seed": 3})");
  j["pipeline"] = {{"schedule", schedule}, {"gradient_accumulation_count", schedule == "grouped" ? 4 : 2}};
  if (!mode.is_null()) j["pipeline"]["recomputation_mode"] = mode;
  return j;
}

TEST(PipelineRecomputation, AutoTakesTheSchedulesDefaultAndEachModeItsSchedules) {
  EXPECT_EQ(parseWorkload(pipelinedChain("grouped", "Auto"), "w.json").pipeline.recomputationMode,
            "RecomputeThenBackpropagate");
  EXPECT_EQ(parseWorkload(pipelinedChain("interleaved", "Auto"), "w.json").pipeline.recomputationMode,
            "RecomputeThenBackpropagate");
  EXPECT_EQ(parseWorkload(pipelinedChain("sequential", "Auto"), "w.json").pipeline.recomputationMode,
            "RecomputeAndBackpropagateInterleaved");
  EXPECT_FALSE(parseWorkload(pipelinedChain("grouped"), "w.json").pipeline.recomputes());
  EXPECT_EQ(workloadRefusal(pipelinedChain("sequential", "RecomputeThenBackpropagate")),
            "w.json: pipeline.recomputation_mode: \"RecomputeThenBackpropagate\" is not supported by the sequential "
            "schedule (TF's RecomputationMode: grouped and interleaved only); expected \"Auto\" or "
            "\"RecomputeAndBackpropagateInterleaved\"");
  EXPECT_EQ(workloadRefusal(pipelinedChain("interleaved", "RecomputeAndBackpropagateInterleaved")),
            "w.json: pipeline.recomputation_mode: \"RecomputeAndBackpropagateInterleaved\" is not supported by the "
            "interleaved schedule (TF's RecomputationMode: grouped and sequential only); expected \"Auto\" or "
            "\"RecomputeThenBackpropagate\"");
  const std::string unknown = workloadRefusal(pipelinedChain("grouped", "auto"));
  EXPECT_NE(unknown.find("pipeline.recomputation_mode"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("RecomputeThenBackpropagate"), std::string::npos) << unknown;
  EXPECT_NE(workloadRefusal(pipelinedChain("grouped", 1)).find("pipeline.recomputation_mode"), std::string::npos);
}

TEST(PipelineRecomputation, CheckpointsCutAStageOnlyWhenRecomputeAndBackpropagateInterleaved) {
  nlohmann::json interleaved = pipelinedChain("grouped", "RecomputeAndBackpropagateInterleaved");
  interleaved["training"]["recompute_checkpoints"] = {"a"};
  EXPECT_EQ(parseWorkload(interleaved, "w.json").training.recomputeCheckpoints, (std::vector<std::string>{"a"}));
  nlohmann::json then = pipelinedChain("grouped", "RecomputeThenBackpropagate");
  then["training"]["recompute_checkpoints"] = {"a"};
  EXPECT_EQ(workloadRefusal(then),
            "w.json: training.recompute_checkpoints: checkpoints have no effect with pipeline.recomputation_mode "
            "\"RecomputeThenBackpropagate\" (TF's RecomputationMode); give \"RecomputeAndBackpropagateInterleaved\" "
            "for them");
  // A RecomputationCheckpoint layer: a cut under the interleaved mode, a warning under the other.
  for (const char* mode : {"RecomputeAndBackpropagateInterleaved", "RecomputeThenBackpropagate"}) {
    nlohmann::json j = pipelinedChain("grouped", mode);
    auto& layers = j["model"]["layers"];
    layers.insert(layers.begin() + 1, nlohmann::json{{"type", "recomputation_checkpoint"}, {"stage", 0}});
    const Workload w = parseWorkload(j, "w.json");
    const OpGraph g = buildTrainingGraph(w);
    if (std::string(mode) == "RecomputeThenBackpropagate") {
      EXPECT_TRUE(w.training.recomputeCheckpoints.empty());
      ASSERT_EQ(g.warnings.size(), 1u);
      EXPECT_NE(g.warnings[0].find("no effect with pipeline.recomputation_mode \"RecomputeThenBackpropagate\""),
                std::string::npos)
          << g.warnings[0];
    } else {
      EXPECT_EQ(w.training.recomputeCheckpoints, (std::vector<std::string>{"a"}));
      EXPECT_TRUE(g.warnings.empty());
    }
  }
}

// Stage 0's a and b run again in its backward pass; c's output, which
// stage 1 reads, is kept (c's backward reads only it and b's output); the
// last stage runs nothing again.
TEST(PipelineRecomputation, StageZeroRunsAgainAllButWhatTheNextStageReads) {
  const OpGraph g = buildTrainingGraph(parseWorkload(pipelinedChain("grouped", "Auto"), "w.json"));
  std::set<std::string> layers;
  for (const Op& op : g.ops)
    if (op.recomputed) layers.insert(op.layer);
  EXPECT_EQ(layers, (std::set<std::string>{"a", "b"}));
}

// RecomputeThenBackpropagate recomputes the stage whole before its first
// backward op, in every schedule of the ops; the interleaved mode runs
// each clone after the gradient its reader needs, so some of stage 0's
// backward ops run before some clones.
TEST(PipelineRecomputation, ThenBackpropagateRecomputesTheStageBeforeItsFirstBackwardOp) {
  auto positions = [](const OpGraph& g, const Schedule& s) {
    std::vector<std::size_t> position(g.ops.size());
    for (std::size_t i = 0; i < s.order.size(); ++i) position[s.order[i]] = i;
    return position;
  };
  auto producesGradient = [](const OpGraph& g, const Op& op) {
    return std::any_of(op.outputs.begin(), op.outputs.end(),
                       [&](std::size_t v) { return g.values[v].kind == ValueKind::Gradient; });
  };
  for (const char* mode : {"RecomputeThenBackpropagate", "RecomputeAndBackpropagateInterleaved"}) {
    const OpGraph g = buildTrainingGraph(parseWorkload(pipelinedChain("grouped", mode), "w.json"));
    const bool whole = std::string(mode) == "RecomputeThenBackpropagate";
    std::size_t backwardBeforeAClone = 0;
    for (const std::string& algorithm : schedulingAlgorithms()) {
      const std::vector<std::size_t> position = positions(g, scheduleOps(g, algorithm));
      std::size_t lastClone = 0, firstBackward = g.ops.size();
      for (std::size_t op = 0; op < g.ops.size(); ++op) {
        const Op& o = g.ops[op];
        if (o.recomputed) lastClone = std::max(lastClone, position[op]);
        else if (producesGradient(g, o) && (o.layer == "a" || o.layer == "b" || o.layer == "c"))
          firstBackward = std::min(firstBackward, position[op]);
      }
      if (whole) {
        EXPECT_LT(lastClone, firstBackward) << mode << ", " << algorithm;
      }
      backwardBeforeAClone += firstBackward < lastClone;
    }
    if (!whole) {
      EXPECT_GT(backwardBeforeAClone, 0u) << mode;
    }
  }
}

// Grouped keeps 3 of stage 0's mini-batches in flight: recomputing, each
// keeps only the stage's input and output, and the step runs more. Without
// recomputation the out-of-memory summary names it.
TEST(PipelineRecomputation, StageZerosLiveBytesFallAndItsStepRunsMore) {
  const CompiledWorkload plain = compile(parseWorkload(pipelinedChain("grouped"), "w.json"));
  const CompiledWorkload then = compile(parseWorkload(pipelinedChain("grouped", "RecomputeThenBackpropagate"), "w.json"));
  nlohmann::json cut = pipelinedChain("grouped", "RecomputeAndBackpropagateInterleaved");
  cut["training"]["recompute_checkpoints"] = {"a"};
  const CompiledWorkload interleaved = compile(parseWorkload(cut, "w.json"));
  const auto a = notAlwaysLivePeakPerIpu(plain), b = notAlwaysLivePeakPerIpu(then),
             c = notAlwaysLivePeakPerIpu(interleaved);
  for (std::size_t ipu = 0; ipu < 2; ++ipu)
    std::cout << "[ figure ] IPU " << ipu << " not-always-live peak per tile: keeping " << a[ipu]
              << " B, RecomputeThenBackpropagate " << b[ipu] << " B, RecomputeAndBackpropagateInterleaved from a "
              << c[ipu] << " B\n";
  EXPECT_LT(b[0], a[0]);
  // The checkpoint's output is kept per mini-batch in flight too: on this
  // chain that costs more than the shorter recomputation saves.
  EXPECT_LT(c[0], a[0]);
  EXPECT_EQ(b[1], a[1]);  // the last stage is not recomputed
  EXPECT_GT(then.report.estimatedStepCycles, plain.report.estimatedStepCycles);
  // The up-front bound counts one mini-batch's activations, which a stage
  // recomputed whole still holds as its backward pass starts: no lower.
  const Workload keeping = parseWorkload(pipelinedChain("grouped"), "w.json");
  EXPECT_EQ(estimateModelMemory(parseWorkload(pipelinedChain("grouped", "Auto"), "w.json"), 32).totalBytes,
            estimateModelMemory(keeping, 32).totalBytes);
  EXPECT_NE(recomputationRemedy(keeping).find("pipeline.recomputation_mode: \"Auto\""), std::string::npos);
  EXPECT_EQ(recomputationRemedy(parseWorkload(pipelinedChain("grouped", "Auto"), "w.json")), "");
}

// The recomputed values are the values: each schedule trains as the
// reference trains with gradient accumulation.
TEST(PipelineRecomputation, GroupedThenBackpropagateTrainsAsAccumulation) {
  expectTrainsAsAccumulation(runTraining(parseWorkload(pipelinedChain("grouped", "Auto"), "w.json"), 8), 4, 8);
}

TEST(PipelineRecomputation, InterleavedScheduleTrainsAsAccumulation) {
  expectTrainsAsAccumulation(runTraining(parseWorkload(pipelinedChain("interleaved", "Auto"), "w.json"), 8), 2, 8);
}

// Two replicas of the recomputing pipeline (4 IPUs): the all-reduce of the
// accumulated gradients follows the recomputed backward passes.
TEST(PipelineRecomputation, TwoReplicasTrainAsAccumulationOverTheGlobalBatch) {
  nlohmann::json j = pipelinedChain("grouped", "Auto");
  j["ipu"]["num_ipus"] = 4;
  expectTrainsAsAccumulation(runTraining(parseWorkload(j, "w.json"), 8), 4, 8);
}

TEST(PipelineRecomputation, SequentialWithACheckpointTrainsAsAccumulation) {
  nlohmann::json j = pipelinedChain("sequential", "Auto");
  j["training"]["recompute_checkpoints"] = {"a"};
  expectTrainsAsAccumulation(runTraining(parseWorkload(j, "w.json"), 8), 2, 8);
}

}  // namespace
}  // namespace ipusim::testing::pipeline_recomputation_test
