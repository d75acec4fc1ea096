// Acceptance of Keras's optimizers, learning-rate schedules, gradient
// clipping and weight decay (issue 32): each, compiled and run in the
// SystemC model, computes the same losses as the CPU reference
// (cpu_reference_optimizer.hpp) over 20 steps (relative 1e-4), from the same
// initial weights and batches; a schedule's learning rate, computed on the
// device each step and outfed beside the loss, is the reference's. One
// simulation per test (per process).
#include "tests/test_build.hpp"
#include "training_harness.hpp"

#include "model/codelets/per_worker.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

namespace ipusim::testing::optimizers_acceptance_test {
namespace {

constexpr std::uint64_t kSteps = 20;

// The small synthetic job of models_acceptance_test.cpp: 64 features, two hidden layers, 10 classes, 16 tiles.
nlohmann::json job(const nlohmann::json& optimizer, const std::string& dtype = "float32") {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 7, "features": 64, "classes": 10, "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 32, "activation": "relu"},
                         {"type": "dense", "units": 16, "activation": "relu"},
                         {"type": "dense", "units": 10, "activation": "softmax"}]},
    "training": {"steps": 20, "steps_per_execution": 4},
    "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 3})");
  j["optimizer"] = optimizer;
  j["model"]["dtype"] = dtype;
  return j;
}

TrainingLosses run(const nlohmann::json& optimizer) {
  return runTraining(scheduler::parseWorkload(job(optimizer), "optimizers.json"), kSteps);
}

std::set<std::string> codelets(const scheduler::CompiledWorkload& c) {
  std::set<std::string> names;
  for (const auto& cs : c.exe.computeSets)
    for (const auto& v : cs.vertices) names.insert(model::workerCodeletOf(v.codelet.str()));  // PerWorker<C>: C
  return names;
}

// The losses match, the model learns, and the vertices named ran.
void expectTrains(const TrainingLosses& r, std::initializer_list<const char*> vertices) {
  expectSameLosses(r, kSteps);
  EXPECT_LT(r.simulated.back(), r.simulated.front());
  const auto names = codelets(r.compiled);
  for (const char* v : vertices) EXPECT_TRUE(names.count(v)) << v;
}

// A schedule: the learning rate outfed each step is Keras's, as the reference computes it.
void expectSchedule(const TrainingLosses& r) {
  expectSameLosses(r, kSteps);
  ASSERT_EQ(r.compiled.outfeed, (std::vector<std::string>{"loss", "accuracy", "learning_rate"}));
  ASSERT_EQ(r.simulatedLearningRate.size(), kSteps);
  ASSERT_EQ(r.referenceLearningRate.size(), kSteps);
  for (std::size_t s = 0; s < kSteps; ++s)
    EXPECT_NEAR(r.simulatedLearningRate[s], r.referenceLearningRate[s], 1e-6 * std::fabs(r.referenceLearningRate[s]) + 1e-12)
        << "step " << s;
  const auto [low, high] = std::minmax_element(r.simulatedLearningRate.begin(), r.simulatedLearningRate.end());
  EXPECT_LT(*low, *high);  // it changed
}

// ---- optimizers ----

TEST(OptimizersAcceptance, AdamW) {
  expectTrains(run({{"type", "adamw"}, {"learning_rate", 0.003}}), {"AdamUpdate"});
}

TEST(OptimizersAcceptance, AdamWStrongDecay) {
  expectTrains(run({{"type", "adamw"}, {"learning_rate", 0.003}, {"weight_decay", 0.5}}), {"AdamUpdate"});
}

TEST(OptimizersAcceptance, Adagrad) {
  expectTrains(run({{"type", "adagrad"}, {"learning_rate", 0.05}}), {"AdagradUpdate"});
}

TEST(OptimizersAcceptance, AdagradFromZeroAccumulator) {
  expectTrains(run({{"type", "adagrad"}, {"learning_rate", 0.01}, {"initial_accumulator_value", 0.0}, {"epsilon", 1e-3}}),
               {"AdagradUpdate"});
}

TEST(OptimizersAcceptance, Adamax) {
  expectTrains(run({{"type", "adamax"}, {"learning_rate", 0.005}}), {"AdamaxUpdate"});
}

TEST(OptimizersAcceptance, Nadam) {
  expectTrains(run({{"type", "nadam"}, {"learning_rate", 0.002}}), {"NadamUpdate", "NadamMomentumProduct"});
}

TEST(OptimizersAcceptance, NadamOtherBetas) {
  expectTrains(run({{"type", "nadam"}, {"learning_rate", 0.002}, {"beta_1", 0.8}, {"beta_2", 0.99}}), {"NadamUpdate"});
}

// ---- weight decay on every optimizer ----

TEST(OptimizersAcceptance, SgdWithWeightDecay) {
  expectTrains(run({{"type", "sgd"}, {"learning_rate", 0.05}, {"weight_decay", 0.1}}), {"GradientDescentUpdate"});
}

TEST(OptimizersAcceptance, MomentumWithWeightDecay) {
  expectTrains(run({{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}, {"weight_decay", 0.1}}),
               {"MomentumUpdate"});
}

TEST(OptimizersAcceptance, RmspropWithWeightDecay) {
  expectTrains(run({{"type", "rmsprop"}, {"centered", true}, {"weight_decay", 0.2}}), {"RmspropUpdateCentered"});
}

TEST(OptimizersAcceptance, AdagradWithWeightDecay) {
  expectTrains(run({{"type", "adagrad"}, {"learning_rate", 0.05}, {"weight_decay", 0.3}}), {"AdagradUpdate"});
}

TEST(OptimizersAcceptance, AdamaxWithWeightDecay) {
  expectTrains(run({{"type", "adamax"}, {"learning_rate", 0.005}, {"weight_decay", 0.3}}), {"AdamaxUpdate"});
}

TEST(OptimizersAcceptance, NadamWithWeightDecay) {
  expectTrains(run({{"type", "nadam"}, {"learning_rate", 0.002}, {"weight_decay", 0.3}}), {"NadamUpdate"});
}

// ---- clipping ----

TEST(OptimizersAcceptance, ClipnormEachGradient) {
  const TrainingLosses r = run({{"type", "sgd"}, {"learning_rate", 0.1}, {"clipnorm", 0.05}});
  expectTrains(r, {"ReduceSquareAdd", "ClipByNorm", "ScaledAdd"});
}

TEST(OptimizersAcceptance, ClipvalueEachElement) {
  expectTrains(run({{"type", "adam"}, {"clipvalue", 0.002}}), {"ClipByValue", "AdamUpdate"});
}

TEST(OptimizersAcceptance, GlobalClipnorm) {
  expectTrains(run({{"type", "sgd"}, {"learning_rate", 0.1}, {"momentum", 0.5}, {"global_clipnorm", 0.1}}),
               {"ReduceSquareAdd", "ClipByNorm", "MomentumUpdate"});
}

TEST(OptimizersAcceptance, GlobalClipnormAboveTheNormClipsNothing) {
  expectTrains(run({{"type", "adagrad"}, {"learning_rate", 0.05}, {"global_clipnorm", 1000.0}}), {"ClipByNorm"});
}

// ---- schedules ----

TEST(OptimizersAcceptance, ExponentialDecay) {
  expectSchedule(run({{"type", "sgd"},
                      {"learning_rate",
                       {{"type", "exponential_decay"}, {"initial_learning_rate", 0.1}, {"decay_steps", 4}, {"decay_rate", 0.5}}}}));
}

TEST(OptimizersAcceptance, ExponentialDecayStaircaseWithAdam) {
  expectSchedule(run({{"type", "adam"},
                      {"learning_rate",
                       {{"type", "exponential_decay"}, {"initial_learning_rate", 0.004}, {"decay_steps", 6},
                        {"decay_rate", 0.3}, {"staircase", true}}}}));
}

TEST(OptimizersAcceptance, PiecewiseConstantDecay) {
  expectSchedule(run({{"type", "sgd"},
                      {"momentum", 0.9},
                      {"learning_rate",
                       {{"type", "piecewise_constant_decay"}, {"boundaries", {5, 12}}, {"values", {0.05, 0.02, 0.005}}}}}));
}

TEST(OptimizersAcceptance, CosineDecay) {
  expectSchedule(run({{"type", "rmsprop"},
                      {"learning_rate",
                       {{"type", "cosine_decay"}, {"initial_learning_rate", 0.003}, {"decay_steps", 15}, {"alpha", 0.1}}}}));
}

TEST(OptimizersAcceptance, CosineDecayWithWarmup) {
  const TrainingLosses r = run({{"type", "adamw"},
                                {"learning_rate",
                                 {{"type", "cosine_decay"}, {"initial_learning_rate", 0.0}, {"decay_steps", 10},
                                  {"warmup_target", 0.005}, {"warmup_steps", 5}}}});
  expectSchedule(r);
  EXPECT_EQ(r.simulatedLearningRate[0], 0.0);  // the warmup starts from initial_learning_rate
  EXPECT_NEAR(r.simulatedLearningRate[5], 0.005, 1e-9);  // and reaches its target
}

TEST(OptimizersAcceptance, PolynomialDecay) {
  expectSchedule(run({{"type", "sgd"},
                      {"learning_rate",
                       {{"type", "polynomial_decay"}, {"initial_learning_rate", 0.1}, {"decay_steps", 12},
                        {"end_learning_rate", 0.01}, {"power", 2.0}}}}));
}

TEST(OptimizersAcceptance, PolynomialDecayCycling) {
  expectSchedule(run({{"type", "adamax"},
                      {"learning_rate",
                       {{"type", "polynomial_decay"}, {"initial_learning_rate", 0.01}, {"decay_steps", 6},
                        {"end_learning_rate", 0.001}, {"cycle", true}}}}));
}

TEST(OptimizersAcceptance, InverseTimeDecay) {
  expectSchedule(run({{"type", "adagrad"},
                      {"learning_rate",
                       {{"type", "inverse_time_decay"}, {"initial_learning_rate", 0.1}, {"decay_steps", 2}, {"decay_rate", 0.5}}}}));
}

TEST(OptimizersAcceptance, InverseTimeDecayStaircaseWithNadamDecayAndClipping) {
  expectSchedule(run({{"type", "nadam"},
                      {"weight_decay", 0.1},
                      {"global_clipnorm", 0.5},
                      {"learning_rate",
                       {{"type", "inverse_time_decay"}, {"initial_learning_rate", 0.003}, {"decay_steps", 3},
                        {"decay_rate", 1.0}, {"staircase", true}}}}));
}

// The learning rate is a counter beside the loss only with a schedule: a constant one changes no outfeed.
TEST(OptimizersAcceptance, ConstantLearningRateOutfeedsLossAndAccuracyOnly) {
  const auto c = scheduler::compile(scheduler::parseWorkload(job({{"type", "nadam"}}), "optimizers.json"));
  EXPECT_EQ(c.outfeed, (std::vector<std::string>{"loss", "accuracy"}));
}

// ---- sharded ----

// A model over two IPUs (its last layer on the second): the step count, the
// learning rate and Nadam's product have a copy on every tile of both IPUs,
// the global norm is reduced across them.
TEST(OptimizersAcceptance, ShardedNadamWithScheduleAndGlobalClipnorm) {
  nlohmann::json j = job({{"type", "nadam"},
                          {"global_clipnorm", 0.5},
                          {"learning_rate",
                           {{"type", "exponential_decay"}, {"initial_learning_rate", 0.004}, {"decay_steps", 5}, {"decay_rate", 0.5}}}});
  j["model"]["layers"][2]["shard"] = 1;
  j["ipu"]["num_ipus"] = 2;
  expectSchedule(runTraining(scheduler::parseWorkload(j, "sharded.json"), kSteps));
}

TEST(OptimizersAcceptance, ShardedAdam) {
  nlohmann::json j = job({{"type", "adam"}});
  j["model"]["layers"][1]["shard"] = 1;
  j["model"]["layers"][2]["shard"] = 1;
  j["ipu"]["num_ipus"] = 2;
  expectTrains(runTraining(scheduler::parseWorkload(j, "sharded.json"), kSteps), {"AdamUpdate"});
}

// ---- from Keras 3 files ----

// The Keras 3 MLP of tests/data/keras/optimizers_keras3.json compiled with
// each compile_config of optimizer_compile_configs.json (an optimizer, its
// schedule, clipping, weight decay), read through a workload naming the file:
// it trains as the reference does, its learning rate outfed each step.
class KerasCompileConfigs : public ::testing::TestWithParam<std::string> {};

TEST_P(KerasCompileConfigs, TrainAsTheReference) {
  auto read = [](const std::string& path) {
    std::ifstream in(sourcePath(path));
    return nlohmann::json::parse(in);
  };
  nlohmann::json model = read("tests/data/keras/optimizers_keras3.json");
  model["compile_config"] = read("tests/data/keras/optimizer_compile_configs.json").at(GetParam());
  const std::string file = "optimizers_" + GetParam() + "_keras3.json";
  std::ofstream(std::string(ipusim::test::binaryDir()) + "/" + file) << model.dump();
  nlohmann::json j = job({});
  j.erase("optimizer");
  j["model"] = {{"keras", file}};
  j["training"] = {{"steps", 20}};  // steps_per_execution from the compile_config (4)
  const scheduler::Workload w = scheduler::parseWorkload(j, "keras_optimizers.json", ipusim::test::binaryDir());
  EXPECT_EQ(w.training.stepsPerExecution, 4u);
  const TrainingLosses r = runTraining(w, kSteps);
  expectSchedule(r);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, KerasCompileConfigs,
                         ::testing::Values("adamw_cosine_warmup_global_clipnorm", "adagrad_exponential_clipnorm",
                                           "adamax_piecewise_clipvalue", "nadam_polynomial_weight_decay",
                                           "sgd_inverse_time_nesterov_weight_decay"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// ---- half precision ----

// The <half> variants of the new updates and clipping track the float32
// reference as the others do (precision_test.cpp): within 1% over 20 steps.
void expectHalfTracksFloat(const std::string& dtype, const nlohmann::json& optimizer) {
  const TrainingLosses r = runTraining(scheduler::parseWorkload(job(optimizer, dtype), "half.json"), kSteps);
  ASSERT_EQ(r.simulated.size(), kSteps);
  double worst = 0;
  for (std::size_t s = 0; s < kSteps; ++s)
    worst = std::max(worst, std::fabs(double(r.simulated[s]) - r.reference[s]) / r.reference[s]);
  EXPECT_LT(worst, 0.01) << dtype;
  EXPECT_GT(worst, 0.0) << dtype;
}

TEST(OptimizersAcceptance, Float16MomentumWithClipnormAndDecayTracksTheFloat32Reference) {
  expectHalfTracksFloat("float16", {{"type", "sgd"}, {"learning_rate", 0.1}, {"momentum", 0.9}, {"clipnorm", 0.5},
                                    {"weight_decay", 0.1}});
}

// Nadam keeps float variables (mixed_float16): in float16, its second moment
// (squares of small gradients) is below half's precision, as Keras's would be.
TEST(OptimizersAcceptance, MixedFloat16NadamWithGlobalClipnormTracksTheFloat32Reference) {
  expectHalfTracksFloat("mixed_float16", {{"type", "nadam"}, {"learning_rate", 0.002}, {"global_clipnorm", 0.5}});
}

TEST(OptimizersAcceptance, Float16AdagradWithClipvalueTracksTheFloat32Reference) {
  expectHalfTracksFloat("float16", {{"type", "adagrad"}, {"learning_rate", 0.05}, {"clipvalue", 0.05}});
}

TEST(OptimizersAcceptance, MixedFloat16AdamaxWithScheduleTracksTheFloat32Reference) {
  expectHalfTracksFloat("mixed_float16",
                        {{"type", "adamax"},
                         {"global_clipnorm", 1.0},
                         {"learning_rate",
                          {{"type", "cosine_decay"}, {"initial_learning_rate", 0.005}, {"decay_steps", 20}}}});
}

}  // namespace
}  // namespace ipusim::testing::optimizers_acceptance_test
