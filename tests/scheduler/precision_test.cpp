// model.dtype: float16 (half variables and compute) and mixed_float16 (float
// variables, half compute, as Keras's policies): what the compiler builds,
// and that training in half follows the float32 CPU reference as closely as
// half precision allows. One simulation per test (per process).
#include "training_harness.hpp"

#include "model/codelets/per_worker.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace ipusim::testing::precision_test {
namespace {

scheduler::Workload tutorialIn(const std::string& dtype) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/mnist_with_feeds.json"));
  w.dtype = dtype;
  return w;
}

std::set<std::string> codelets(const scheduler::CompiledWorkload& c) {
  std::set<std::string> names;
  for (const auto& cs : c.exe.computeSets)
    for (const auto& v : cs.vertices) names.insert(model::workerCodeletOf(v.codelet.str()));  // PerWorker<C>: C
  return names;
}

TEST(Precision, Float16KeepsWeightsInHalfAndRunsTheAmpOnHalves) {
  const auto c = scheduler::compile(tutorialIn("float16"));
  for (ir::Id w : c.weightTensors) EXPECT_EQ(c.exe.tensors[w].dtype, ir::DType::Half) << c.exe.tensors[w].name;
  const auto names = codelets(c);
  EXPECT_TRUE(names.count("MatMulPartial<half,float>") || names.count("MatMulPartial<half,half>"));
  EXPECT_EQ(names.count("MatMulPartial"), 0u);
  EXPECT_TRUE(names.count("Cast<float,half>"));  // the float images into the first layer
  EXPECT_TRUE(names.count("ScaledAdd<half>"));
  EXPECT_TRUE(names.count("SoftmaxCrossEntropy<half>"));
}

TEST(Precision, MixedFloat16CastsFloatWeightsForEachStep) {
  const auto c = scheduler::compile(tutorialIn("mixed_float16"));
  for (ir::Id w : c.weightTensors) EXPECT_EQ(c.exe.tensors[w].dtype, ir::DType::Float) << c.exe.tensors[w].name;
  const auto names = codelets(c);
  EXPECT_TRUE(names.count("Cast<float,half>"));
  EXPECT_EQ(names.count("MatMulPartial"), 0u);
  EXPECT_TRUE(names.count("ScaledAdd"));  // the update in float
  bool kernelCast = false;
  for (const auto& cs : c.exe.computeSets) kernelCast = kernelCast || cs.name == "dense/kernel_cast";
  EXPECT_TRUE(kernelCast);
}

// Half rounding of weights, activations and gradients moves the loss by
// about half's precision (2^-11 relative per rounding), not more: within 1%
// of the float32 reference over 30 steps, and it still learns.
void expectHalfTracksFloat(const std::string& dtype) {
  const TrainingLosses r = runTraining(tutorialIn(dtype), 30);
  expectHalfTracksFloat32(r, 30, dtype);
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += r.simulated[i], last += r.simulated[25 + i];
  EXPECT_LT(last, first);
}

TEST(Precision, Float16TrainingTracksTheFloat32Reference) { expectHalfTracksFloat("float16"); }
TEST(Precision, MixedFloat16TrainingTracksTheFloat32Reference) { expectHalfTracksFloat("mixed_float16"); }

// The layers and optimizers users bring, in half: the codelets' <half>
// variants (activations, dropout, the optimizers' updates) track the float32
// reference as the tutorial does.
void expectNewLayersTrackFloat(const std::string& dtype, const nlohmann::json& optimizer, const char* activation) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 16, "shuffle_seed": 7, "features": 64, "classes": 10, "examples": 256},
    "model": {"layers": [{"type": "dense", "units": 64}, {"type": "activation", "activation": "relu"},
                         {"type": "dropout", "rate": 0.2}, {"type": "dense", "units": 32},
                         {"type": "dense", "units": 10, "activation": "softmax"}]},
    "training": {"steps": 30, "steps_per_execution": 5}, "ipu": {"tiles": 16}, "seed": 5})");
  j["model"]["dtype"] = dtype;
  j["model"]["layers"][3]["activation"] = activation;
  j["optimizer"] = optimizer;
  expectHalfTracksFloat32(runTraining(scheduler::parseWorkload(j, "half.json"), 30), 30, dtype);
}

TEST(Precision, MixedFloat16AdamGeluDropoutTrackTheFloat32Reference) {
  expectNewLayersTrackFloat("mixed_float16", {{"type", "adam"}}, "gelu");
}
TEST(Precision, Float16MomentumSigmoidDropoutTrackTheFloat32Reference) {
  expectNewLayersTrackFloat("float16", {{"type", "sgd"}, {"learning_rate", 0.1}, {"momentum", 0.9}}, "sigmoid");
}
TEST(Precision, Float16RmspropTanhDropoutTrackTheFloat32Reference) {
  expectNewLayersTrackFloat("float16", {{"type", "rmsprop"}}, "tanh");
}

}  // namespace
}  // namespace ipusim::testing::precision_test
