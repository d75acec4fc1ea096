// Batch normalization's codelets: values against a double-precision
// reference of the formulas (Keras's BatchNormalization, popnn's gradient),
// the half variants' float statistics, bad params, and exact cycles.
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace test_codelet_batch_norm {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

constexpr std::size_t kRows = 3, kCols = 5;

TEST(BatchNormCodelets, StatisticsGiveInvStdDevAndMoveTheAverages) {
  const std::vector<float> mean{0.5f, -1.0f, 0.0f}, meanSquare{1.0f, 1.5f, 0.0f};
  std::vector<Buffer> b = {Buffer::of(mean), Buffer::of(meanSquare), Buffer::of({0.0f, 0.0f, 2.0f}),
                           Buffer::of({1.0f, 1.0f, 1.0f}), Buffer::of({-1.0f, -1.0f, -1.0f})};
  run("BatchNormStatistics", b, {{"epsilon", 1e-3}, {"momentum", 0.9}});
  for (std::size_t c = 0; c < 3; ++c) {
    const double variance = std::max(double(meanSquare[c]) - double(mean[c]) * mean[c], 0.0);
    EXPECT_NEAR(b[4].floats[c], 1.0 / std::sqrt(variance + 1e-3), 1e-5) << c;
    EXPECT_NEAR(b[3].floats[c], 0.9 + 0.1 * variance, 1e-6) << c;  // the biased batch variance, as Keras
  }
  EXPECT_NEAR(b[2].floats[0], 0.05, 1e-7);
  EXPECT_NEAR(b[2].floats[1], -0.1, 1e-7);
  EXPECT_NEAR(b[2].floats[2], 1.8, 1e-6);
}

TEST(BatchNormCodelets, InvStdDevReadsTheMovingVarianceAlone) {
  std::vector<Buffer> b = {Buffer::of({1.0f, 0.0f, 4.0f}), Buffer::of({-1.0f, -1.0f, -1.0f})};
  run("BatchNormInvStdDev", b, {{"epsilon", 1e-3}});
  EXPECT_EQ(b[0].floats, (std::vector<float>{1.0f, 0.0f, 4.0f}));  // left as it is
  for (std::size_t c = 0; c < 3; ++c)
    EXPECT_NEAR(b[1].floats[c], 1.0 / std::sqrt(double(b[0].floats[c]) + 1e-3), 1e-5) << c;
  std::vector<Buffer> bad = {Buffer::of({1.0f}), Buffer::of({0.0f})};
  EXPECT_THROW(run("BatchNormInvStdDev", bad, {{"epsilon", 0}}), std::invalid_argument);
}

TEST(BatchNormCodelets, NormaliseAndInputGradAgainstDoubleReference) {
  const auto x = pseudoRandom(kRows * kCols, 1), mean = pseudoRandom(kCols, 2), gamma = pseudoRandom(kCols, 3),
             beta = pseudoRandom(kCols, 4), dy = pseudoRandom(kRows * kCols, 5), gd = pseudoRandom(kCols, 6),
             bd = pseudoRandom(kCols, 7);
  std::vector<float> inv(kCols);
  for (std::size_t c = 0; c < kCols; ++c) inv[c] = 1.0f + 0.25f * float(c);
  std::vector<Buffer> f = {Buffer::of(x),     Buffer::of(mean), Buffer::of(inv), Buffer::of(gamma), Buffer::of(beta),
                           Buffer::of(std::vector<float>(kRows * kCols)), Buffer::of(std::vector<float>(kRows * kCols))};
  run("BatchNormalise", f, {{"rows", kRows}, {"cols", kCols}});
  std::vector<Buffer> g = {Buffer::of(dy),    Buffer::of(f[5].floats), Buffer::of(gd), Buffer::of(bd), Buffer::of(gamma),
                           Buffer::of(inv),   Buffer::of(std::vector<float>(kRows * kCols))};
  const double scale = 1.0 / kRows;
  run("BatchNormInputGrad", g, {{"rows", kRows}, {"cols", kCols}, {"scale", scale}});
  for (std::size_t i = 0; i < kRows * kCols; ++i) {
    const std::size_t c = i % kCols;
    const double w = (double(x[i]) - mean[c]) * inv[c];
    EXPECT_NEAR(f[5].floats[i], w, 1e-5) << i;
    EXPECT_NEAR(f[6].floats[i], w * gamma[c] + beta[c], 1e-5) << i;
    EXPECT_NEAR(g[6].floats[i], (dy[i] - scale * (w * gd[c] + bd[c])) * gamma[c] * inv[c], 1e-5) << i;
  }
}

// The half variant: half activations, float per-channel vectors.
TEST(BatchNormCodelets, HalfActivationsFloatStatistics) {
  std::vector<Buffer> f = {Buffer::ofHalves({1.0f, 3.0f}), Buffer::of({2.0f}), Buffer::of({0.5f}), Buffer::of({2.0f}),
                           Buffer::of({0.25f}), Buffer::ofHalves({0, 0}), Buffer::ofHalves({0, 0})};
  run("BatchNormalise<half>", f, {{"rows", 2}, {"cols", 1}});
  EXPECT_EQ(f[5].halfValues(), (std::vector<float>{-0.5f, 0.5f}));
  EXPECT_EQ(f[6].halfValues(), (std::vector<float>{-0.75f, 1.25f}));
}

TEST(BatchNormCodelets, BadParamsAndSizesAreNamed) {
  std::vector<Buffer> b = {Buffer::of({0}), Buffer::of({0}), Buffer::of({0}), Buffer::of({1}), Buffer::of({0})};
  try {
    run("BatchNormStatistics", b, {{"epsilon", 0}, {"momentum", 0.9}});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("epsilon"), std::string::npos) << e.what();
  }
  std::vector<Buffer> f = {Buffer::of({1, 2}), Buffer::of({0}), Buffer::of({1}), Buffer::of({1}), Buffer::of({0}),
                           Buffer::of({0, 0}), Buffer::of({0, 0})};
  EXPECT_THROW(run("BatchNormalise", f, {{"rows", 2}, {"cols", 2}}), std::invalid_argument);
}

// Exact worker cycles, from the named constants (cycle_model.hpp).
TEST(BatchNormCodelets, Cycles) {
  // 5 channels: 3 vectors of 2 floats at 34 cycles, after BinaryOp2D's 5.
  EXPECT_EQ(cyc::kBatchNormStatisticsCyclesPerVector, 34u);
  EXPECT_EQ(cyclesOf("BatchNormStatistics", {5, 5, 5, 5, 5}, {{"epsilon", 1e-3}, {"momentum", 0.99}}), 5u + 3 * 34);
  // Inference's: the epsilon add (3), SQRT (10) and DIVIDE (10) per vector.
  EXPECT_EQ(cyc::kBatchNormInvStdDevCyclesPerVector, 23u);
  EXPECT_EQ(cyclesOf("BatchNormInvStdDev", {5, 5}, {{"epsilon", 1e-3}}), 5u + 3 * 23);
  // 3 rows x 8 columns: 15 + 3 x (7 + 4 vectors x 8).
  EXPECT_EQ(cyclesOf("BatchNormalise", {24, 8, 8, 8, 8, 24, 24}, {{"rows", 3}, {"cols", 8}}), 15u + 3 * (7 + 4 * 8));
  // In half, 4 halves a vector: 15 + 3 x (7 + 2 x 8).
  EXPECT_EQ(cyclesOf("BatchNormalise<half>", {24, 8, 8, 8, 8, 24, 24}, {{"rows", 3}, {"cols", 8}}), 15u + 3 * (7 + 2 * 8));
  // 15 + 3 x (7 + 4 vectors x 9) + 4 vectors x 3 (gamma x invStdDev).
  EXPECT_EQ(cyclesOf("BatchNormInputGrad", {24, 24, 8, 8, 8, 8, 24}, {{"rows", 3}, {"cols", 8}, {"scale", 1.0 / 3}}),
            15u + 3 * (7 + 4 * 9) + 4 * 3);
}

}  // namespace

}  // namespace test_codelet_batch_norm
