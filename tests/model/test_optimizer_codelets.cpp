// The codelets of issue 32's optimizers: the updates of Adagrad, Adamax,
// Nadam and plain gradient descent, weight decay, the Scheduled variants,
// the learning-rate schedules, Nadam's momentum product and the gradient
// clipping: values against scalar references written from Keras 3's
// formulas, and exact cycles from the constants of cycle_model.hpp.
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace test_optimizer_codelets {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

TEST(OptimizerCodelets, GradientDescentWithWeightDecay) {
  std::vector<Buffer> b = {Buffer::of({1.0f, -2.0f}), Buffer::of({0.5f, 0.25f})};
  run("GradientDescentUpdate", b, {{"learningRate", 0.1}, {"weightDecay", 0.2}});
  // Keras: w - w wd lr, then w -= lr g.
  EXPECT_FLOAT_EQ(b[0].floats[0], (1.0f - 1.0f * 0.2f * 0.1f) - 0.5f * 0.1f);
  EXPECT_FLOAT_EQ(b[0].floats[1], (-2.0f + 2.0f * 0.2f * 0.1f) - 0.25f * 0.1f);
  EXPECT_EQ(cyclesOf("GradientDescentUpdate", {4, 4}, {{"learningRate", 0.1}}),
            cyc::kScaledAddVertexOverhead + 2 * cyc::kScaledAddCyclesPerVector);
  // Weight decay adds an axpby per vector and its scalar product.
  EXPECT_EQ(cyclesOf("GradientDescentUpdate", {4, 4}, {{"learningRate", 0.1}, {"weightDecay", 0.2}}),
            cyc::kScaledAddVertexOverhead + 1 + 2 * 2 * cyc::kScaledAddCyclesPerVector);
}

// Every existing update takes weightDecay, 0 by default (the cycles then unchanged).
TEST(OptimizerCodelets, WeightDecayOnTheExistingUpdates) {
  std::vector<Buffer> b = {Buffer::of({1.0f}), Buffer::of({0.5f}), Buffer::of({0.0f}), Buffer::of({0.0f}), Buffer::ofInts({1})};
  run("AdamUpdate", b, {{"learningRate", 0.001}, {"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-7}, {"weightDecay", 0.5}});
  EXPECT_NEAR(b[0].floats[0], 1.0f - 0.0005f - 0.001f, 1e-6f);
  EXPECT_EQ(cyclesOf("MomentumUpdate", {4, 4, 4}, {{"learningRate", 0.1}, {"momentum", 0.9}, {"nesterov", 0}}),
            cyc::kScaledAddVertexOverhead + 2 * 2 * cyc::kScaledAddCyclesPerVector);
}

TEST(OptimizerCodelets, AdagradAccumulates) {
  std::vector<Buffer> b = {Buffer::of({1.0f}), Buffer::of({0.5f}), Buffer::of({0.1f})};
  run("AdagradUpdate", b, {{"learningRate", 0.01}, {"epsilon", 1e-7}});
  EXPECT_FLOAT_EQ(b[2].floats[0], 0.35f);
  EXPECT_NEAR(b[0].floats[0], 1.0f - 0.01f * 0.5f / std::sqrt(0.35f + 1e-7f), 1e-7f);
  EXPECT_EQ(cyclesOf("AdagradUpdate", {4, 4, 4}, {{"learningRate", 0.01}, {"epsilon", 1e-7}}),
            cyc::kScaledAddVertexOverhead + 2 * (cyc::kSquareCyclesPerVector + 2 * cyc::kAddSubMulCyclesPerVector +
                                                 cyc::kSqrtCyclesPerVector + cyc::kDivideCyclesPerVector +
                                                 cyc::kScaledAddCyclesPerVector));
}

TEST(OptimizerCodelets, AdamaxTakesTheInfinityNorm) {
  // Step 2: m = 0.1, u = 0.4; g = -0.5.
  std::vector<Buffer> b = {Buffer::of({1.0f}), Buffer::of({-0.5f}), Buffer::of({0.1f}), Buffer::of({0.4f}),
                           Buffer::ofInts({2})};
  run("AdamaxUpdate", b, {{"learningRate", 0.002}, {"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-7}});
  const float m = 0.1f + (-0.5f - 0.1f) * 0.1f, u = std::max(0.999f * 0.4f, 0.5f);
  EXPECT_FLOAT_EQ(b[2].floats[0], m);
  EXPECT_FLOAT_EQ(b[3].floats[0], u);
  EXPECT_NEAR(b[0].floats[0], 1.0f - 0.002f * m / ((1.0f - 0.81f) * (u + 1e-7f)), 1e-6f);
}

TEST(OptimizerCodelets, NadamAtTheFirstStep) {
  const double b1 = 0.9, b2 = 0.999, t = 1;
  const double uT = b1 * (1 - 0.5 * std::pow(0.96, t)), uNext = b1 * (1 - 0.5 * std::pow(0.96, t + 1));
  const double product = uT;  // NadamMomentumProduct's, after its first step
  std::vector<Buffer> b = {Buffer::of({1.0f}), Buffer::of({0.5f}), Buffer::of({0.0f}), Buffer::of({0.0f}),
                           Buffer::ofInts({1}), Buffer::of({float(product)})};
  run("NadamUpdate", b, {{"learningRate", 0.001}, {"beta1", b1}, {"beta2", b2}, {"epsilon", 1e-7}});
  const double m = 0.05, v = 0.00025;
  const double mHat = uNext * m / (1 - product * uNext) + (1 - uT) * 0.5 / (1 - product);
  const double vHat = v / (1 - b2);
  EXPECT_FLOAT_EQ(b[2].floats[0], float(m));
  EXPECT_FLOAT_EQ(b[3].floats[0], float(v));
  EXPECT_NEAR(b[0].floats[0], 1.0 - 0.001 * mHat / (std::sqrt(vHat) + 1e-7), 1e-6);
}

TEST(OptimizerCodelets, NadamMomentumProduct) {
  std::vector<Buffer> b = {Buffer::ofInts({3}), Buffer::of({0.5f})};
  run("NadamMomentumProduct", b, {{"beta1", 0.9}});
  EXPECT_NEAR(b[1].floats[0], 0.5 * 0.9 * (1 - 0.5 * std::pow(0.96, 3)), 1e-7);
  EXPECT_EQ(cyclesOf("NadamMomentumProduct", {1, 1}, {{"beta1", 0.9}}),
            cyc::kUnaryOpVertexOverhead + cyc::kIntToFloatCyclesPerElement + cyc::kScalarPowerCycles + 4);
}

// A Scheduled update reads the step's rate from its last field.
TEST(OptimizerCodelets, ScheduledVariantsReadTheRate) {
  std::vector<Buffer> b = {Buffer::of({1.0f}), Buffer::of({0.5f}), Buffer::of({0.0f}), Buffer::of({0.25f})};
  run("MomentumUpdateScheduled", b, {{"momentum", 0.9}, {"nesterov", 0}});
  EXPECT_FLOAT_EQ(b[2].floats[0], -0.125f);
  EXPECT_FLOAT_EQ(b[0].floats[0], 0.875f);
  EXPECT_EQ(cyclesOf("MomentumUpdateScheduled", {4, 4, 4, 1}, {{"momentum", 0.9}, {"nesterov", 0}}),
            cyc::kScaledAddVertexOverhead + 1 + 2 * 2 * cyc::kScaledAddCyclesPerVector);
  std::vector<Buffer> h = {Buffer::ofHalves({1.0f}), Buffer::ofHalves({0.5f}), Buffer::ofHalves({0.1f}), Buffer::of({0.25f})};
  run("AdagradUpdateScheduled<half>", h, {{"epsilon", 1e-7}});
  EXPECT_NEAR(h[0].halfValues()[0], 1.0f - 0.25f * 0.5f / std::sqrt(0.35f), 1e-3f);
}

// Keras 3's schedules at iteration step - 1.
TEST(OptimizerCodelets, LearningRateSchedules) {
  auto at = [](std::int32_t step, std::map<std::string, double> params) {
    std::vector<Buffer> b = {Buffer::ofInts({step}), Buffer::of({7.0f})};
    run("LearningRate", b, params);
    return double(b[1].floats[0]);
  };
  // Exponential: 0.1 * 0.5^(9 / 4); staircase 0.1 * 0.5^2.
  EXPECT_NEAR(at(10, {{"schedule", 0}, {"initialLearningRate", 0.1}, {"decaySteps", 4}, {"decayRate", 0.5}}),
              0.1 * std::pow(0.5, 9.0 / 4), 1e-8);
  EXPECT_NEAR(at(10, {{"schedule", 0}, {"initialLearningRate", 0.1}, {"decaySteps", 4}, {"decayRate", 0.5}, {"staircase", 1}}),
              0.025, 1e-8);
  // Cosine with warmup: linear to the target, then the cosine from it, clamped past the decay.
  const std::map<std::string, double> cosine{{"schedule", 1}, {"initialLearningRate", 0.0}, {"decaySteps", 10},
                                             {"warmup", 1}, {"warmupTarget", 0.01}, {"warmupSteps", 5}, {"alpha", 0.1}};
  EXPECT_NEAR(at(3, cosine), 0.01 * 2 / 5, 1e-9);
  EXPECT_NEAR(at(6, cosine), 0.01, 1e-9);
  EXPECT_NEAR(at(11, cosine), 0.01 * (0.9 * 0.5 * (1 + std::cos(M_PI * 0.5)) + 0.1), 1e-9);
  EXPECT_NEAR(at(100, cosine), 0.001, 1e-9);
  // Polynomial: (init - end)(1 - s / d)^power + end; with cycle d grows to the next multiple.
  const std::map<std::string, double> poly{{"schedule", 2}, {"initialLearningRate", 0.1}, {"decaySteps", 4},
                                           {"endLearningRate", 0.01}, {"power", 2}};
  EXPECT_NEAR(at(2, poly), 0.09 * std::pow(0.75, 2) + 0.01, 1e-8);
  EXPECT_NEAR(at(20, poly), 0.01, 1e-9);
  auto cycling = poly;
  cycling["cycle"] = 1;
  EXPECT_NEAR(at(7, cycling), 0.09 * std::pow(1 - 6.0 / 8, 2) + 0.01, 1e-8);
  EXPECT_NEAR(at(1, cycling), 0.1, 1e-8);  // float
  // Inverse time: init / (1 + rate s / d).
  EXPECT_NEAR(at(5, {{"schedule", 3}, {"initialLearningRate", 0.1}, {"decaySteps", 2}, {"decayRate", 0.5}}), 0.1 / 2, 1e-8);
  EXPECT_EQ(cyclesOf("LearningRate", {1, 1}, {{"schedule", 0}, {"initialLearningRate", 0.1}, {"decaySteps", 4}}),
            cyc::kUnaryOpVertexOverhead + cyc::kIntToFloatCyclesPerElement + cyc::kScalarReciprocalCycles +
                cyc::kScalarPowerCycles + 1);
  EXPECT_GT(cyclesOf("LearningRate", {1, 1}, cosine), cyc::kScalarCosCycles);
}

TEST(OptimizerCodelets, PiecewiseConstantLearningRate) {
  for (auto [step, expected] : std::vector<std::pair<std::int32_t, float>>{{1, 0.1f}, {11, 0.1f}, {12, 0.01f}, {21, 0.01f}, {22, 0.001f}}) {
    std::vector<Buffer> b = {Buffer::ofInts({step}), Buffer::ofInts({10, 20}), Buffer::of({0.1f, 0.01f, 0.001f}), Buffer::of({7.0f})};
    run("PiecewiseConstantLearningRate", b);
    EXPECT_FLOAT_EQ(b[3].floats[0], expected) << "step " << step;  // values[0] while step - 1 <= 10
  }
  EXPECT_EQ(cyclesOf("PiecewiseConstantLearningRate", {1, 2, 3, 1}),
            cyc::kUnaryOpVertexOverhead + 2 * cyc::kSelectCyclesPerVector);
}

TEST(OptimizerCodelets, ReduceSquareAdd) {
  std::vector<float> x(19);
  double sum = 0;
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * float(i) - 0.7f, sum += double(x[i]) * x[i];
  std::vector<Buffer> b = {Buffer::of(x), Buffer::of({7.0f})};
  run("ReduceSquareAdd", b);
  EXPECT_NEAR(b[1].floats[0], sum, 1e-5);
  // popops SCALAR_OUTPUT_SINGLE_INPUT: 26 + 2 per 4 floats + 1 per remaining element.
  EXPECT_EQ(cyclesOf("ReduceSquareAdd", {19, 1}), cyc::kScalarReduceOverhead + 4 * 2 + 3);
  EXPECT_EQ(cyclesOf("ReduceSquareAdd", {5, 1}), cyc::kScalarReduceOverhead + cyc::kScalarReduceShortCycles);
  EXPECT_EQ(cyclesOf("ReduceSquareAdd<half,float>", {19, 1}), cyc::kScalarReduceOverhead + 2 * 2 + 3);
}

TEST(OptimizerCodelets, ClipByNormPerTensorAndGlobal) {
  // Norm 5 over a clip of 2: everything times 2 / 5; below the clip nothing changes.
  for (double global : {0.0, 1.0}) {
    std::vector<Buffer> b = {Buffer::of({3.0f, -4.0f}), Buffer::of({25.0f}), Buffer::of({7.0f, 7.0f})};
    run("ClipByNorm", b, {{"clipNorm", 2.0}, {"global", global}});
    EXPECT_FLOAT_EQ(b[2].floats[0], 1.2f);
    EXPECT_FLOAT_EQ(b[2].floats[1], -1.6f);
    std::vector<Buffer> c = {Buffer::of({3.0f, -4.0f}), Buffer::of({25.0f}), Buffer::of({7.0f, 7.0f})};
    run("ClipByNorm", c, {{"clipNorm", 10.0}, {"global", global}});
    EXPECT_FLOAT_EQ(c[2].floats[0], 3.0f);
  }
  // A zero gradient stays zero; an infinite global norm makes NaN, as Keras's clip_by_global_norm.
  std::vector<Buffer> z = {Buffer::of({0.0f}), Buffer::of({0.0f}), Buffer::of({7.0f})};
  run("ClipByNorm", z, {{"clipNorm", 1.0}, {"global", 0}});
  EXPECT_EQ(z[2].floats[0], 0.0f);
  std::vector<Buffer> inf = {Buffer::of({1.0f}), Buffer::of({INFINITY}), Buffer::of({7.0f})};
  run("ClipByNorm", inf, {{"clipNorm", 1.0}, {"global", 1}});
  EXPECT_TRUE(std::isnan(inf[2].floats[0]));
  EXPECT_EQ(cyclesOf("ClipByNorm", {5, 1, 5}, {{"clipNorm", 1.0}, {"global", 1}}),
            cyc::kUnaryOpVertexOverhead + cyc::kSqrtCyclesPerVector + cyc::kMinMaxCyclesPerVector +
                cyc::kScalarReciprocalCycles + 3 * cyc::kArithCyclesPerVector);
}

TEST(OptimizerCodelets, ClipByValue) {
  std::vector<Buffer> b = {Buffer::of({-3.0f, 0.25f, 2.0f}), Buffer::of({7.0f, 7.0f, 7.0f})};
  run("ClipByValue", b, {{"clipValue", 0.5}});
  EXPECT_EQ(b[1].floats, (std::vector<float>{-0.5f, 0.25f, 0.5f}));
  EXPECT_EQ(cyclesOf("ClipByValue", {3, 3}, {{"clipValue", 0.5}}), cyc::kUnaryOpVertexOverhead + 2 * cyc::kClampCyclesPerVector);
  EXPECT_EQ(cyclesOf("ClipByValue<half>", {8, 8}, {{"clipValue", 0.5}}), cyc::kUnaryOpVertexOverhead + 2 * cyc::kClampCyclesPerVector);
}

}  // namespace test_optimizer_codelets
