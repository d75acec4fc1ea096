// The codelets of the layers and optimizers users bring: activations and
// their gradients, dropout, the step counter, the optimizers' updates and
// the accuracy: values against scalar references, and exact cycles from the
// constants of cycle_model.hpp.
#include "model/codelets/cycle_model.hpp"
#include "model/numeric/dropout_mask.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace test_codelet_models {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

constexpr std::size_t kN = 19;  // two strips of 8 lanes and a remainder

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f))); }

}  // namespace

TEST(ModelCodelets, ActivationsMatchReference) {
  const auto x = pseudoRandom(kN, 11);
  for (auto [name, f] : std::vector<std::pair<std::string, float (*)(float)>>{
           {"Sigmoid", sigmoid}, {"Tanh", [](float v) { return std::tanh(v); }}, {"Gelu", gelu}}) {
    std::vector<Buffer> b = {Buffer::of(x), Buffer::of(std::vector<float>(kN, 7.0f))};
    run(name, b);
    for (std::size_t i = 0; i < kN; ++i) EXPECT_NEAR(b[1].floats[i], f(x[i]), 1e-6f) << name << " " << i;
  }
}

// Each gradient against a central difference of its forward function.
TEST(ModelCodelets, ActivationGradientsMatchFiniteDifferences) {
  const auto x = pseudoRandom(kN, 12);
  const auto g = pseudoRandom(kN, 13);
  const double h = 1e-3;
  struct Case { const char* name; double (*f)(double); bool readsOutput; };
  const Case cases[] = {{"SigmoidGrad", [](double v) { return 1 / (1 + std::exp(-v)); }, true},
                        {"TanhGrad", [](double v) { return std::tanh(v); }, true},
                        {"GeluGrad", [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, false}};
  for (const Case& c : cases) {
    std::vector<float> reads(kN);
    for (std::size_t i = 0; i < kN; ++i) reads[i] = c.readsOutput ? float(c.f(x[i])) : x[i];
    std::vector<Buffer> b = {Buffer::of(reads), Buffer::of(g), Buffer::of(std::vector<float>(kN, 7.0f))};
    run(c.name, b);
    for (std::size_t i = 0; i < kN; ++i) {
      const double slope = (c.f(x[i] + h) - c.f(x[i] - h)) / (2 * h);
      EXPECT_NEAR(b[2].floats[i], g[i] * slope, 1e-4) << c.name << " " << i;
    }
  }
}

TEST(ModelCodelets, ActivationCycles) {
  EXPECT_EQ(cyclesOf("Sigmoid", {9, 9}), cyc::kUnaryOpVertexOverhead + 5 * cyc::kSigmoidCyclesPerVector);
  EXPECT_EQ(cyclesOf("Sigmoid<half>", {9, 9}), cyc::kUnaryOpVertexOverhead + 3 * cyc::kSigmoidHalfCyclesPerVector);
  EXPECT_EQ(cyclesOf("Tanh", {4, 4}), cyc::kUnaryOpVertexOverhead + 2 * cyc::kTanhCyclesPerVector);
  EXPECT_EQ(cyclesOf("Tanh<half>", {4, 4}), cyc::kUnaryOpVertexOverhead + 1 * cyc::kTanhHalfCyclesPerVector);
  // Gelu is popops' GELU_ERF, one element per loop: 20 + 3 x 22.
  EXPECT_EQ(cyclesOf("Gelu", {3, 3}), cyc::kUnaryOpVertexOverhead + 3 * cyc::kGeluCyclesPerElement);
  EXPECT_EQ(cyclesOf("Gelu", {3, 3}), 20u + 3u * 22u);
  EXPECT_EQ(cyclesOf("Gelu<half>", {5, 5}), cyc::kUnaryOpVertexOverhead + 5 * cyc::kGeluHalfCyclesPerElement);
  EXPECT_EQ(cyclesOf("SigmoidGrad", {9, 9, 9}),
            cyc::kNonLinearityGradVertexOverhead + 5 * cyc::kSigmoidTanhGradCyclesPerVector);
  EXPECT_EQ(cyclesOf("GeluGrad<half>", {9, 9, 9}),
            cyc::kNonLinearityGradVertexOverhead + 3 * cyc::kGeluGradHalfCyclesPerVector);
  // The popops table entries they come from (popopsCycleEstimators.hpp unaryOpPerfInfo),
  // and popnn's gradient costs (getNonLinearityGradOpCycles SIGMOID, TANH 3; GELU_ERF 30, 15).
  EXPECT_EQ(cyc::kSigmoidCyclesPerVector, 12u);
  EXPECT_EQ(cyc::kTanhHalfCyclesPerVector, 4u);
  EXPECT_EQ(cyc::kSigmoidTanhGradCyclesPerVector, 3u);
  EXPECT_EQ(cyc::kGeluGradCyclesPerVector, 30u);
  EXPECT_EQ(cyc::kGeluGradHalfCyclesPerVector, 15u);
}

TEST(ModelCodelets, DropoutKeepsAboutOneMinusRateAndScales) {
  const std::size_t n = 4000;
  std::vector<Buffer> b = {Buffer::of(std::vector<float>(n, 1.0f)), Buffer::ofInts({3}),
                           Buffer::of(std::vector<float>(n, 7.0f))};
  run("Dropout", b, {{"rate", 0.25}, {"seed", 99}, {"offset", 100}});
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool keep = ipusim::numeric::dropoutKeeps(99, 3, 100 + i, 0.25f);
    EXPECT_FLOAT_EQ(b[2].floats[i], keep ? 1.0f / 0.75f : 0.0f) << i;
    kept += keep;
  }
  EXPECT_NEAR(double(kept) / n, 0.75, 0.03);
  // Another step draws another mask.
  std::size_t same = 0;
  for (std::size_t i = 0; i < n; ++i)
    same += ipusim::numeric::dropoutKeeps(99, 3, i, 0.25f) == ipusim::numeric::dropoutKeeps(99, 4, i, 0.25f);
  EXPECT_LT(same, n * 9 / 10);
  EXPECT_EQ(cyclesOf("Dropout", {9, 1, 9}, {{"rate", 0.5}, {"seed", 1}, {"offset", 0}}),
            cyc::kUnaryOpVertexOverhead + 5 * cyc::kDropoutCyclesPerVector);
}

TEST(ModelCodelets, DropoutRejectsARateOfOne) {
  std::vector<Buffer> b = {Buffer::of({1.0f}), Buffer::ofInts({1}), Buffer::of({0.0f})};
  EXPECT_THROW(run("Dropout", b, {{"rate", 1.0}, {"seed", 1}, {"offset", 0}}), std::invalid_argument);
}

TEST(ModelCodelets, IncrementCountsSteps) {
  std::vector<Buffer> b = {Buffer::ofInts({0, 41})};
  run("Increment", b);
  EXPECT_EQ(b[0].ints, (std::vector<std::int32_t>{1, 42}));
  EXPECT_EQ(cyclesOf("Increment", {1}), cyc::kBinaryOpVertexOverhead + cyc::kIntAddCyclesPerElement);
}

TEST(ModelCodelets, MomentumAndNesterov) {
  for (bool nesterov : {false, true}) {
    std::vector<Buffer> b = {Buffer::of({1.0f, -2.0f}), Buffer::of({0.5f, 0.25f}), Buffer::of({0.1f, 0.0f})};
    run("MomentumUpdate", b, {{"learningRate", 0.1}, {"momentum", 0.9}, {"nesterov", nesterov ? 1.0 : 0.0}});
    const float v0 = 0.9f * 0.1f - 0.1f * 0.5f;
    EXPECT_FLOAT_EQ(b[2].floats[0], v0);
    EXPECT_FLOAT_EQ(b[0].floats[0], 1.0f + (nesterov ? 0.9f * v0 - 0.1f * 0.5f : v0));
  }
  EXPECT_EQ(cyclesOf("MomentumUpdate", {4, 4, 4}, {{"learningRate", 0.1}, {"momentum", 0.9}, {"nesterov", 0}}),
            cyc::kScaledAddVertexOverhead + 2 * 2 * cyc::kScaledAddCyclesPerVector);
}

TEST(ModelCodelets, AdamBiasCorrectsByTheStep) {
  std::vector<Buffer> b = {Buffer::of({1.0f}), Buffer::of({0.5f}), Buffer::of({0.0f}), Buffer::of({0.0f}),
                           Buffer::ofInts({1})};
  run("AdamUpdate", b, {{"learningRate", 0.001}, {"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-7}});
  // Step 1: m = 0.05, v = 0.00025, alpha = 0.001 sqrt(0.001) / 0.1: w moves by ~lr.
  EXPECT_FLOAT_EQ(b[2].floats[0], 0.05f);
  EXPECT_FLOAT_EQ(b[3].floats[0], 0.00025f);
  EXPECT_NEAR(b[0].floats[0], 1.0f - 0.001f, 1e-6f);
}

TEST(ModelCodelets, RmspropPlainAndCenteredWithMomentum) {
  std::vector<Buffer> b = {Buffer::of({1.0f}), Buffer::of({0.5f}), Buffer::of({0.0f})};
  run("RmspropUpdate", b, {{"learningRate", 0.01}, {"rho", 0.9}, {"epsilon", 1e-7}});
  EXPECT_FLOAT_EQ(b[2].floats[0], 0.025f);
  EXPECT_NEAR(b[0].floats[0], 1.0f - 0.01f * 0.5f / std::sqrt(0.025f + 1e-7f), 1e-7f);
  std::vector<Buffer> c = {Buffer::of({1.0f}), Buffer::of({0.5f}), Buffer::of({0.0f}), Buffer::of({0.0f}),
                           Buffer::of({0.0f})};
  run("RmspropUpdateCenteredMomentum", c, {{"learningRate", 0.01}, {"rho", 0.9}, {"epsilon", 1e-7}, {"momentum", 0.5}});
  const float inc = 0.01f * 0.5f / std::sqrt(0.025f - 0.05f * 0.05f + 1e-7f);
  EXPECT_FLOAT_EQ(c[3].floats[0], 0.05f);
  EXPECT_FLOAT_EQ(c[4].floats[0], inc);
  EXPECT_FLOAT_EQ(c[0].floats[0], 1.0f - inc);
}

TEST(ModelCodelets, AccuracyTakesTheFirstLargest) {
  std::vector<Buffer> b = {Buffer::of({0.1f, 0.7f, 0.2f, 0.4f, 0.4f, 0.2f, 0.3f, 0.3f, 0.4f}), Buffer::ofInts({1, 1, 2}),
                           Buffer::of({7.0f, 7.0f, 7.0f})};
  run("Accuracy", b, {{"rows", 3}, {"classes", 3}});
  EXPECT_EQ(b[2].floats, (std::vector<float>{1.0f, 0.0f, 1.0f}));  // row 1: a tie goes to class 0
  EXPECT_EQ(cyclesOf("Accuracy", {30, 3, 3}, {{"rows", 3}, {"classes", 10}}),
            cyc::kContinuousReduceOverhead +
                3 * (cyc::kContinuousReduceRowOverhead + 5 + cyc::kLabelLookupCycles + cyc::kAddSubMulCyclesPerVector));
}

TEST(ModelCodelets, TargetLossesMatchReference) {
  const std::vector<float> x{0.5f, -1.0f, 2.0f, 0.0f, 1.0f, -0.5f}, t{0, 0, 1, 1, 0, 0};  // 2 rows x 3
  std::vector<Buffer> sq = {Buffer::of(x), Buffer::of(t), Buffer::of({7.0f, 7.0f})};
  run("SquaredError", sq, {{"rows", 2}, {"cols", 3}});
  EXPECT_FLOAT_EQ(sq[2].floats[0], (0.25f + 1.0f + 1.0f) / 3);
  std::vector<Buffer> bce = {Buffer::of(x), Buffer::of(t), Buffer::of(std::vector<float>(6)), Buffer::of({7.0f, 7.0f})};
  run("SigmoidCrossEntropy", bce, {{"rows", 2}, {"cols", 3}});
  double row0 = 0;
  for (int c = 0; c < 3; ++c) row0 += -(t[c] * std::log(sigmoid(x[c])) + (1 - t[c]) * std::log(1 - sigmoid(x[c])));
  EXPECT_NEAR(bce[3].floats[0], row0 / 3, 1e-6);
  EXPECT_FLOAT_EQ(bce[2].floats[1], sigmoid(-1.0f));
  std::vector<Buffer> cce = {Buffer::of(x), Buffer::of(t), Buffer::of(std::vector<float>(6)), Buffer::of({7.0f, 7.0f})};
  run("SoftmaxCrossEntropyDense", cce, {{"rows", 2}, {"cols", 3}});
  const double sum0 = std::exp(0.5) + std::exp(-1.0) + std::exp(2.0);
  EXPECT_NEAR(cce[3].floats[0], -std::log(std::exp(2.0) / sum0), 1e-6);
  std::vector<Buffer> diff = {Buffer::of(x), Buffer::of(t), Buffer::of(std::vector<float>(6))};
  run("TargetDifference", diff, {{"rows", 2}, {"cols", 3}, {"scale", 0.5}});
  EXPECT_FLOAT_EQ(diff[2].floats[2], 0.5f * (2.0f - 1.0f));
  std::vector<Buffer> acc = {Buffer::of({0.1f, 0.2f, 0.7f, 0.6f, 0.3f, 0.1f}), Buffer::of(t), Buffer::of({7.0f, 7.0f})};
  run("CategoricalAccuracy", acc, {{"rows", 2}, {"cols", 3}});
  EXPECT_EQ(acc[2].floats, (std::vector<float>{1.0f, 1.0f}));
  run("BinaryAccuracy", acc, {{"rows", 2}, {"cols", 3}});
  EXPECT_FLOAT_EQ(acc[2].floats[0], 1.0f);
  EXPECT_FLOAT_EQ(acc[2].floats[1], 1.0f);  // row 1: 0.6 > 0.5 against 1, 0.3 and 0.1 against 0
}

TEST(ModelCodelets, TargetLossCycles) {
  // popnn getLossTransformCycles(isFloat, isSoftmax = false, n): 19 + 4 n for floats.
  EXPECT_EQ(cyclesOf("TargetDifference", {6, 6, 6}, {{"rows", 2}, {"cols", 3}, {"scale", 1}}), 19u + 4 * 6);
  EXPECT_EQ(cyclesOf("SquaredError", {6, 6, 2}, {{"rows", 2}, {"cols", 3}}),
            cyc::kContinuousReduceOverhead +
                2 * (cyc::kContinuousReduceRowOverhead + 2 + 2 * (cyc::kAddSubMulCyclesPerVector + cyc::kSquareCyclesPerVector)));
}

}  // namespace test_codelet_models
