// Pipelining (model.layers[i].stage, pipeline: {schedule,
// gradient_accumulation_count, device_mapping}): the schedules' order of
// stage passes, the workload errors, and training: a pipeline with
// gradient_accumulation_count N trains as the unpipelined model with
// gradient accumulation N, for each schedule.
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/multi_ipu/pipeline_schedule.hpp"
#include "scheduler/models/workload.hpp"
#include "model/ir/renames.hpp"
#include "model/ir/tile_memory_usage.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

namespace ipusim::testing::pipelining_test {
namespace {

using scheduler::PipelinePlan;
using scheduler::StagePass;

nlohmann::json smallJson() {
  std::ifstream in(sourcePath("workloads/small_synthetic.json"));
  return nlohmann::json::parse(in);
}

// small_synthetic (flatten, dense, dense_1) in two stages on two IPUs.
nlohmann::json pipelinedJson(const std::string& schedule, std::uint32_t count) {
  nlohmann::json j = smallJson();
  auto& layers = j["model"]["layers"];
  layers[0]["stage"] = 0;
  layers[1]["stage"] = 0;
  layers[2]["stage"] = 1;
  j["pipeline"] = {{"schedule", schedule}, {"gradient_accumulation_count", count}};
  j["ipu"]["num_ipus"] = 2;
  return j;
}

scheduler::Workload pipelined(const std::string& schedule, std::uint32_t count) {
  return scheduler::parseWorkload(pipelinedJson(schedule, count), "pipelined.json");
}

// When each pass of the plan runs: (time step, slot) per pass; every pass once.
std::map<std::tuple<std::uint32_t, std::uint32_t, bool>, std::pair<std::size_t, std::size_t>> whenRuns(
    const PipelinePlan& plan) {
  std::map<std::tuple<std::uint32_t, std::uint32_t, bool>, std::pair<std::size_t, std::size_t>> at;
  for (std::size_t t = 0; t < plan.timeSteps.size(); ++t)
    for (std::size_t s = 0; s < plan.timeSteps[t].slots.size(); ++s) {
      std::set<std::uint32_t> stages;
      for (const StagePass& p : plan.timeSteps[t].slots[s]) {
        EXPECT_TRUE(stages.insert(p.stage).second) << "two passes of stage " << p.stage << " in one slot";
        EXPECT_TRUE(at.emplace(std::make_tuple(p.stage, p.miniBatch, p.backward), std::make_pair(t, s)).second);
      }
    }
  return at;
}

// Each pass after the ones it needs: F_{s-1}(m) before F_s(m), F_{S-1}(m) before B_{S-1}(m), B_{s+1}(m) before B_s(m).
void expectDependenciesHold(const PipelinePlan& plan, std::uint32_t S, std::uint32_t N) {
  const auto at = whenRuns(plan);
  ASSERT_EQ(at.size(), std::size_t(2 * S * N));
  for (std::uint32_t m = 0; m < N; ++m)
    for (std::uint32_t s = 0; s < S; ++s) {
      if (s > 0) {
        EXPECT_LT(at.at({s - 1, m, false}), at.at({s, m, false}));
      }
      if (s + 1 < S) {
        EXPECT_LT(at.at({s + 1, m, true}), at.at({s, m, true}));
      }
    }
  for (std::uint32_t m = 0; m < N; ++m) EXPECT_LT(at.at({S - 1, m, false}), at.at({S - 1, m, true}));
}

// Most mini-batches of stage 0 in flight (forward run, backward not yet) at once.
std::uint32_t inFlightOnStage0(const PipelinePlan& plan) {
  std::int64_t now = 0, most = 0;
  for (const auto& step : plan.timeSteps)
    for (const auto& slot : step.slots)
      for (const StagePass& p : slot)
        if (p.stage == 0) {
          now += p.backward ? -1 : 1;
          most = std::max(most, now);
        }
  return std::uint32_t(most);
}

TEST(PipelineSchedule, EveryScheduleRunsEachPassOnceAfterWhatItNeeds) {
  for (const char* schedule : {"grouped", "interleaved", "sequential"})
    for (std::uint32_t S : {2u, 3u, 4u}) {
      SCOPED_TRACE(std::string(schedule) + " S=" + std::to_string(S));
      expectDependenciesHold(scheduler::planPipeline(schedule, S, 8), S, 8);
    }
}

TEST(PipelineSchedule, GroupedRampsUpRunsBothDirectionsThenRampsDown) {
  // S = 2, N = 4: forwards only, then forward and backward slots, then backwards only.
  const PipelinePlan plan = scheduler::planPipeline("grouped", 2, 4);
  ASSERT_EQ(plan.timeSteps.size(), 6u);  // N + 2S - 2
  EXPECT_EQ(plan.timeSteps[0].slots, (std::vector<scheduler::PipelineSlot>{{{0, 0, false}}}));
  EXPECT_EQ(plan.timeSteps[1].slots,
            (std::vector<scheduler::PipelineSlot>{{{0, 1, false}, {1, 0, false}}, {{1, 0, true}}}));
  EXPECT_EQ(plan.timeSteps[2].slots,
            (std::vector<scheduler::PipelineSlot>{{{0, 2, false}, {1, 1, false}}, {{1, 1, true}, {0, 0, true}}}));
  EXPECT_EQ(plan.timeSteps[5].slots, (std::vector<scheduler::PipelineSlot>{{{0, 3, true}}}));
  EXPECT_EQ(plan.firstTimeStep, (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(PipelineSchedule, InterleavedAlternatesForwardAndBackwardAndKeepsFewerMiniBatchesInFlight) {
  const PipelinePlan interleaved = scheduler::planPipeline("interleaved", 2, 8);
  // Slot u: stage 0 runs F at even u, B at odd u (from its first backward on).
  EXPECT_EQ(interleaved.timeSteps[2].slots[0], (scheduler::PipelineSlot{{0, 1, false}, {1, 0, true}}));
  EXPECT_EQ(interleaved.timeSteps[3].slots[0], (scheduler::PipelineSlot{{0, 0, true}, {1, 1, false}}));
  for (std::uint32_t S : {2u, 4u}) {
    EXPECT_EQ(inFlightOnStage0(scheduler::planPipeline("grouped", S, 16)), 2 * S - 1) << S;
    EXPECT_EQ(inFlightOnStage0(scheduler::planPipeline("interleaved", S, 16)), S) << S;
    EXPECT_EQ(inFlightOnStage0(scheduler::planPipeline("sequential", S, 16)), 1u) << S;
  }
}

TEST(PipelineSchedule, ForwardOnlyKeepsEachForwardPassOnceInItsOrderAndEachStepStartingAtItsFirstStage) {
  for (const char* schedule : {"grouped", "interleaved", "sequential"})
    for (std::uint32_t S : {2u, 3u}) {
      SCOPED_TRACE(std::string(schedule) + " S=" + std::to_string(S));
      const PipelinePlan plan = scheduler::planPipeline(schedule, S, 4);
      const PipelinePlan forward = scheduler::forwardOnly(plan);
      std::vector<scheduler::StagePass> before, after;
      for (const auto& step : plan.timeSteps)
        for (const auto& slot : step.slots)
          for (const auto& p : slot)
            if (!p.backward) before.push_back(p);
      for (const auto& step : forward.timeSteps) {
        ASSERT_FALSE(step.slots.empty());
        for (const auto& slot : step.slots) {
          ASSERT_FALSE(slot.empty());
          for (const auto& p : slot) after.push_back(p);
        }
      }
      EXPECT_EQ(after, before);  // every forward pass, once, in the same order; no backward one
      ASSERT_EQ(forward.firstTimeStep.size(), 4u);
      for (std::uint32_t m = 0; m < 4; ++m) {  // step m's first time step runs F_0(m)
        const auto& slots = forward.timeSteps.at(forward.firstTimeStep[m]).slots;
        bool entering = false;
        for (const auto& slot : slots)
          for (const auto& p : slot) entering = entering || (p.stage == 0 && p.miniBatch == m);
        EXPECT_TRUE(entering) << "step " << m;
      }
    }
  // Grouped, S = 2, N = 4: the two-step ramp-down of backward passes is gone.
  EXPECT_EQ(scheduler::forwardOnly(scheduler::planPipeline("grouped", 2, 4)).timeSteps.size(), 5u);
}

// ---- workload errors ----

void expectError(const nlohmann::json& j, const std::string& expected) {
  try {
    scheduler::parseWorkload(j, "pipelined.json");
    FAIL() << "expected an error containing: " << expected;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(PipelineWorkload, StagesSetEachLayersIpuFromTheDeviceMapping) {
  nlohmann::json j = pipelinedJson("grouped", 4);
  j["ipu"]["num_ipus"] = 4;
  j["pipeline"]["device_mapping"] = {3, 1};
  const scheduler::Workload w = scheduler::parseWorkload(j, "pipelined.json");
  EXPECT_EQ(w.pipeline.stages, 2u);
  EXPECT_EQ(w.layers[1].shard, 3u);
  EXPECT_EQ(w.layers[2].shard, 1u);
  EXPECT_EQ(w.training.gradientAccumulationCount, 4u);
}

TEST(PipelineWorkload, BadStagesNameTheKeyAndWhatTheyNeed) {
  nlohmann::json j = pipelinedJson("grouped", 4);
  j["model"]["layers"][0]["stage"] = 1;
  expectError(j, "pipelined.json: model.layers[0].stage: 1: the first layer must be stage 0");
  j = pipelinedJson("grouped", 4);
  j["model"]["layers"][2]["stage"] = 0;
  j["model"]["layers"][1]["stage"] = 1;
  expectError(j, "model.layers[2].stage: 0 after stage 1: stages must follow the layer order");
  j = pipelinedJson("grouped", 4);
  j["model"]["layers"][2]["stage"] = 2;
  expectError(j, "model.layers[2].stage: 2 after stage 0: stages are numbered without gaps (expected 0 or 1)");
  j = pipelinedJson("grouped", 4);
  j["model"]["layers"][1].erase("stage");
  expectError(j, "model.layers[1].stage: missing: in a pipelined model every layer names its stage");
  j = pipelinedJson("grouped", 4);
  for (auto& l : j["model"]["layers"]) l["stage"] = 0;
  expectError(j, "a pipeline requires at least two stages");
  j = smallJson();
  j["model"]["layers"][1]["stage"] = 0;
  expectError(j, "model.layers[1].stage: needs the workload's \"pipeline\" key");
}

TEST(PipelineWorkload, BadDeviceMappingNamesTheKeyAndWhatItNeeds) {
  nlohmann::json j = pipelinedJson("grouped", 4);
  j["pipeline"]["device_mapping"] = {0, 1, 1};
  expectError(j, "pipelined.json: pipeline.device_mapping: 3 entries for 2 stages: each stage must be mapped to one IPU");
  j["pipeline"]["device_mapping"] = {0, 2};
  expectError(j, "pipeline.device_mapping[1]: IPU 2 does not exist: expected 0 to 1 (ipu.num_ipus is 2)");
  j["pipeline"]["device_mapping"] = {1, 1};
  expectError(j, "pipeline.device_mapping[1]: IPU 1 already runs another stage");
}

TEST(PipelineWorkload, AnAccumulationCountTheScheduleCannotTakeNamesTheKey) {
  expectError(pipelinedJson("grouped", 2),
              "pipeline.gradient_accumulation_count: 2 is not a multiple of 4: the grouped schedule needs a multiple of "
              "2 x the 2 stages");
  expectError(pipelinedJson("interleaved", 3),
              "pipeline.gradient_accumulation_count: 3 is not a multiple of 2: the interleaved schedule needs a "
              "multiple of the 2 stages");
  nlohmann::json j = pipelinedJson("grouped", 4);
  j["pipeline"].erase("gradient_accumulation_count");
  expectError(j, "pipeline.gradient_accumulation_count: missing");
  j = pipelinedJson("grouped", 4);
  j["training"]["gradient_accumulation_count"] = 2;
  expectError(j, "training.gradient_accumulation_count: 2 differs from pipeline.gradient_accumulation_count (4)");
  j = pipelinedJson("grouped", 8);  // steps_per_execution is 4
  expectError(j, "pipeline.gradient_accumulation_count: 8 must divide training.steps_per_execution (4)");
}

TEST(PipelineWorkload, NumIpusNotAMultipleOfThePipelinesIpusNamesTheKey) {
  nlohmann::json j = pipelinedJson("grouped", 4);
  j["ipu"]["num_ipus"] = 3;
  expectError(j, "ipu.num_ipus: 3 is not a multiple of the 2 IPUs one replica needs (pipeline.device_mapping up to 1)");
}

// ---- memory: mini-batches in flight ----

TEST(Pipelining, InterleavedKeepsFewerActivationBytesLiveThanGrouped) {
  const auto grouped = notAlwaysLivePeakPerIpu(scheduler::compile(pipelined("grouped", 4)));
  const auto interleaved = notAlwaysLivePeakPerIpu(scheduler::compile(pipelined("interleaved", 4)));
  const auto sequential = notAlwaysLivePeakPerIpu(scheduler::compile(pipelined("sequential", 4)));
  for (std::size_t ipu = 0; ipu < 2; ++ipu)
    std::cout << "[ figure ] IPU " << ipu << " not-always-live peak per tile: grouped " << grouped[ipu]
              << " B, interleaved " << interleaved[ipu] << " B, sequential " << sequential[ipu] << " B\n";
  // Stage 0 keeps 3 mini-batches in flight (Grouped), 2 (Interleaved), 1 (Sequential).
  EXPECT_LT(interleaved[0], grouped[0]);
  EXPECT_LT(sequential[0], interleaved[0]);
  EXPECT_LE(interleaved[1], grouped[1]);
}

// The IPUs a program touches: its vertices' tiles, or its copy's tensors' tiles.
std::set<std::uint32_t> ipusTouched(const scheduler::CompiledWorkload& c, const ir::Program& p) {
  std::set<std::uint32_t> ipus;
  if (p.kind == ir::ProgramKind::Execute) {
    for (const ir::Vertex& v : c.exe.computeSets[p.computeSet].vertices) ipus.insert(c.target.ipuOf(v.tile));
  } else {
    for (const ir::CopyRegion& r : ir::renamedRegions(c.exe, p))
      for (ir::Id t : {r.src.tensor, r.dst.tensor})
        for (const ir::TileInterval& iv : c.exe.tensors[t].mapping) ipus.insert(c.target.ipuOf(iv.tile));
  }
  return ipus;
}

std::uint64_t verticesOf(const ir::Executable& exe) {
  std::uint64_t n = 0;
  for (const ir::ComputeSet& cs : exe.computeSets) n += cs.vertices.size();
  return n;
}

// A stage's compute sets are laid out once: each mini-batch after the first
// runs them renamed to its own tensors, so the vertices do not grow with the
// mini-batches in flight (as Poplar compiles a pipeline stage once).
TEST(Pipelining, EachMiniBatchRunsTheStagesComputeSetsOnItsOwnTensors) {
  for (const std::string schedule : {"grouped", "interleaved", "sequential"}) {
    SCOPED_TRACE(schedule);
    const auto compiled = [&](std::uint32_t count) {
      nlohmann::json j = pipelinedJson(schedule, count);
      j["training"]["steps_per_execution"] = count;
      j["training"]["steps"] = count;
      return scheduler::compile(scheduler::parseWorkload(j, "pipelined.json"));
    };
    const scheduler::CompiledWorkload four = compiled(4), eight = compiled(8);
    EXPECT_EQ(verticesOf(four.exe), verticesOf(eight.exe));
    EXPECT_EQ(four.exe.computeSets.size(), eight.exe.computeSets.size());
    std::map<ir::Id, std::set<std::vector<ir::Id>>> runsOf;  // compute set -> the tensors it is renamed to
    for (const ir::Program& p : eight.exe.programs) {
      if (p.kind != ir::ProgramKind::Execute) continue;
      std::vector<ir::Id> to;
      for (const ir::TensorRename& r : p.renames) to.push_back(r.to);
      runsOf[p.computeSet].insert(to);
    }
    // The additions into the accumulators run once per mini-batch: 8 distinct tensor sets.
    std::size_t perMiniBatch = 0;
    for (const auto& [cs, renames] : runsOf) perMiniBatch += renames.size() == 8;
    EXPECT_GT(perMiniBatch, 0u);
    // The passes' copies too: a later mini-batch's moves mini-batch 0's regions.
    std::size_t renamedCopies = 0;
    for (const ir::Program& p : eight.exe.programs)
      if (p.kind == ir::ProgramKind::Copy && p.copyOf != ir::kNoId) {
        ++renamedCopies;
        EXPECT_TRUE(eight.exe.programs[p.copyOf].renames.empty());
      }
    EXPECT_GT(renamedCopies, 0u);
    EXPECT_NO_THROW(eight.exe.validate(eight.target.totalTiles()));
  }
}

TEST(Pipelining, AGroupedSlotRunsItsIpusApartJoinedOnlyByTheInterIpuCopyThatOpensIt) {
  const scheduler::CompiledWorkload c = scheduler::compile(pipelined("grouped", 4));
  std::size_t slots = 0, bothStages = 0, opened = 0;
  for (const ir::Program& slot : c.exe.programs) {
    if (!slot.ipusApart || slot.name.rfind("slot ", 0) != 0) continue;
    ++slots;
    std::set<std::uint32_t> ipus;
    for (std::size_t k = 0; k < slot.children.size(); ++k) {
      const ir::Program& p = c.exe.programs[slot.children[k]];
      const std::set<std::uint32_t> touched = ipusTouched(c, p);
      ipus.insert(touched.begin(), touched.end());
      if (touched.size() < 2) continue;
      // Only the first child, a Copy, crosses the IPU-Links.
      EXPECT_EQ(k, 0u) << slot.name << ": '" << p.name << "' joins the IPUs in the middle of the slot";
      EXPECT_EQ(p.kind, ir::ProgramKind::Copy) << slot.name;
      ++opened;
    }
    bothStages += ipus.size() == 2;
  }
  // 4 mini-batches, 2 stages: 6 time steps of a forward and a backward slot,
  // less the empty ones (no backward in the first, no forward in the last).
  EXPECT_EQ(slots, 10u);
  EXPECT_GT(bothStages, 0u);
  EXPECT_GT(opened, 0u);
}

// ---- training: as gradient accumulation over the same mini-batches ----

TEST(Pipelining, GroupedTrainsAsGradientAccumulation) {
  expectTrainsAsAccumulation(runTraining(pipelined("grouped", 4), 20), 4, 20);
}

TEST(Pipelining, InterleavedTrainsAsGradientAccumulation) {
  expectTrainsAsAccumulation(runTraining(pipelined("interleaved", 4), 20), 4, 20);
}

TEST(Pipelining, SequentialTrainsAsGradientAccumulation) {
  expectTrainsAsAccumulation(runTraining(pipelined("sequential", 4), 20), 4, 20);
}

// Two replicas of the 2-IPU pipeline (4 IPUs): the all-reduce averages the
// replicas' accumulated gradients before each update.
void expectTwoReplicasTrainAsAccumulation(const std::string& schedule) {
  nlohmann::json j = pipelinedJson(schedule, 4);
  j["ipu"]["num_ipus"] = 4;
  expectTrainsAsAccumulation(runTraining(scheduler::parseWorkload(j, "pipelined.json"), 20), 4, 20);
}

TEST(Pipelining, TwoReplicasOfAPipelineTrainAsAccumulationOverTheGlobalBatch) {
  expectTwoReplicasTrainAsAccumulation("grouped");
}

TEST(Pipelining, TwoReplicasOfAnInterleavedPipelineTrainAsAccumulationOverTheGlobalBatch) {
  expectTwoReplicasTrainAsAccumulation("interleaved");
}

// Sequential's updates are the update ops' own Sequences: replication once
// found no update program among apply_gradients' children (it looked for
// Execute children only) and ran no all-reduce.
TEST(Pipelining, TwoReplicasOfASequentialPipelineTrainAsAccumulationOverTheGlobalBatch) {
  expectTwoReplicasTrainAsAccumulation("sequential");
}

// ---- token ids: the embedding on the first stage ----

// A workload on token ids pipelined in two stages on two IPUs.
nlohmann::json pipelinedOnTokens(const char* layers, const nlohmann::json& inputShape, std::uint32_t classes,
                                 const std::string& schedule) {
  nlohmann::json j = smallJob(layers, inputShape, {{"type", "sgd"}, {"learning_rate", 0.05}}, 9);
  j["dataset"]["classes"] = classes;
  j["pipeline"] = {{"schedule", schedule}, {"gradient_accumulation_count", 4}};
  j["ipu"]["num_ipus"] = 2;
  return j;
}

// A BERT-style encoder split as Graphcore splits BERT: the embeddings and
// their normalization on the first stage, the encoder and the masked-LM
// scores on the second; the ids stream in to stage 0 only.
const char* kEncoderInTwoStages = R"([
    {"type": "embedding", "input_dim": 20, "output_dim": 8, "name": "tokens", "stage": 0},
    {"type": "position_embedding", "sequence_length": 6, "name": "positions", "stage": 0},
    {"type": "add", "inputs": ["tokens", "positions"], "name": "embeddings", "stage": 0},
    {"type": "layer_normalization", "epsilon": 1e-12, "name": "embeddings_norm", "stage": 0},
    {"type": "multi_head_attention", "num_heads": 2, "key_dim": 4, "inputs": ["embeddings_norm", "embeddings_norm"],
     "name": "attention", "stage": 1},
    {"type": "add", "inputs": ["embeddings_norm", "attention"], "name": "residual", "stage": 1},
    {"type": "layer_normalization", "epsilon": 1e-12, "name": "norm", "stage": 1},
    {"type": "dense", "units": 20, "activation": "softmax", "name": "mlm", "stage": 1}])";

void expectEncoderTrainsAsAccumulation(const std::string& schedule) {
  const nlohmann::json j = pipelinedOnTokens(kEncoderInTwoStages, {6}, 20, schedule);
  expectTrainsAsAccumulation(runTraining(scheduler::parseWorkload(j, "encoder.json"), 20), 4, 20);
}

TEST(PipeliningOnTokens, AnEncoderOnTokenIdsTrainsAsGradientAccumulation) {
  expectEncoderTrainsAsAccumulation("grouped");
}

TEST(PipeliningOnTokens, AnInterleavedEncoderOnTokenIdsTrainsAsGradientAccumulation) {
  expectEncoderTrainsAsAccumulation("interleaved");
}

// Keras's mask crosses the stages: the LSTM on stage 1 reads the token ids
// streamed to stage 0 (each mini-batch its own).
TEST(PipeliningOnTokens, AMaskReadOnALaterStageTrainsAsGradientAccumulation) {
  const nlohmann::json j = pipelinedOnTokens(R"([
    {"type": "embedding", "input_dim": 3, "output_dim": 6, "mask_zero": true, "name": "tokens", "stage": 0},
    {"type": "dense", "units": 5, "activation": "tanh", "name": "projection", "stage": 0},
    {"type": "lstm", "units": 4, "name": "lstm", "stage": 1},
    {"type": "dense", "units": 10, "activation": "softmax", "name": "classes", "stage": 1}])", {7}, 10, "grouped");
  expectTrainsAsAccumulation(runTraining(scheduler::parseWorkload(j, "masked.json"), 20), 4, 20);
}

}  // namespace
}  // namespace ipusim::testing::pipelining_test
