// model.dtype: float16 (half variables and compute) and mixed_float16 (float
// variables, half compute, as Keras's policies): what the compiler builds,
// and that training in half follows the float32 CPU reference as closely as
// half precision allows. One simulation per test (per process).
#include "training_harness.hpp"

#include "scheduler/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace ipusim::testing {
namespace {

scheduler::Workload tutorialIn(const std::string& dtype) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/mnist_with_feeds.json"));
  w.dtype = dtype;
  return w;
}

std::set<std::string> codelets(const scheduler::CompiledWorkload& c) {
  std::set<std::string> names;
  for (const auto& cs : c.exe.computeSets)
    for (const auto& v : cs.vertices) names.insert(v.codelet);
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
  ASSERT_EQ(r.simulated.size(), 30u);
  double worst = 0;
  for (std::size_t s = 0; s < 30; ++s) worst = std::max(worst, std::fabs(double(r.simulated[s]) - r.reference[s]) / r.reference[s]);
  EXPECT_LT(worst, 0.01) << dtype;
  EXPECT_GT(worst, 0.0) << dtype << ": no rounding at all would mean half arithmetic is not happening";
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += r.simulated[i], last += r.simulated[25 + i];
  EXPECT_LT(last, first);
}

TEST(Precision, Float16TrainingTracksTheFloat32Reference) { expectHalfTracksFloat("float16"); }
TEST(Precision, MixedFloat16TrainingTracksTheFloat32Reference) { expectHalfTracksFloat("mixed_float16"); }

}  // namespace
}  // namespace ipusim::testing
