// Layer normalization's codelets: values against a double-precision
// reference of the formulas (Keras's LayerNormalization, its gradient), the
// half variants' float statistics, bad params and sizes, and exact cycles.
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace test_codelet_layer_norm {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

constexpr std::size_t kRows = 3, kN = 5;

TEST(LayerNormCodelets, NormaliseAndInputGradAgainstDoubleReference) {
  const auto x = pseudoRandom(kRows * kN, 1), dy = pseudoRandom(kRows * kN, 2);
  std::vector<Buffer> f = {Buffer::of(x), Buffer::of(std::vector<float>(kRows * kN)), Buffer::of(std::vector<float>(kRows))};
  run("LayerNormalise", f, {{"rows", kRows}, {"n", kN}, {"epsilon", 1e-3}});
  std::vector<Buffer> g = {Buffer::of(dy), Buffer::of(f[1].floats), Buffer::of(std::vector<float>(kRows * kN)),
                           Buffer::of(f[2].floats)};
  run("LayerNormInputGrad", g, {{"rows", kRows}, {"n", kN}});
  for (std::size_t r = 0; r < kRows; ++r) {
    double mean = 0, variance = 0;
    for (std::size_t i = 0; i < kN; ++i) mean += x[r * kN + i] / double(kN);
    for (std::size_t i = 0; i < kN; ++i) variance += (x[r * kN + i] - mean) * (x[r * kN + i] - mean) / double(kN);
    const double inv = 1.0 / std::sqrt(variance + 1e-3);
    EXPECT_NEAR(f[2].floats[r], inv, 1e-4 * inv) << r;
    double meanG = 0, meanGW = 0;
    for (std::size_t i = 0; i < kN; ++i) {
      const double w = (x[r * kN + i] - mean) * inv;
      EXPECT_NEAR(f[1].floats[r * kN + i], w, 1e-5) << r << "," << i;
      meanG += dy[r * kN + i] / double(kN);
      meanGW += dy[r * kN + i] * w / double(kN);
    }
    for (std::size_t i = 0; i < kN; ++i) {
      const double w = (x[r * kN + i] - mean) * inv;
      EXPECT_NEAR(g[2].floats[r * kN + i], inv * (dy[r * kN + i] - meanG - w * meanGW), 1e-4) << r << "," << i;
    }
  }
}

// The half variant: half rows, float invStdDev.
TEST(LayerNormCodelets, HalfRowsFloatStatistics) {
  std::vector<Buffer> f = {Buffer::ofHalves({1.0f, 3.0f}), Buffer::ofHalves({0, 0}), Buffer::of({0.0f})};
  run("LayerNormalise<half>", f, {{"rows", 1}, {"n", 2}, {"epsilon", 1e-3}});
  // mean 2, variance 1: invStdDev 1 / sqrt(1.001).
  EXPECT_NEAR(f[2].floats[0], 1.0 / std::sqrt(1.001), 1e-6);
  const std::vector<float> whitened = f[1].halfValues();
  EXPECT_NEAR(whitened[0], -0.9995, 1e-3);
  EXPECT_NEAR(whitened[1], 0.9995, 1e-3);
}

TEST(LayerNormCodelets, BadParamsAndSizesAreNamed) {
  std::vector<Buffer> f = {Buffer::of({1, 2}), Buffer::of({0, 0}), Buffer::of({0})};
  try {
    run("LayerNormalise", f, {{"rows", 1}, {"n", 2}, {"epsilon", 0}});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("epsilon"), std::string::npos) << e.what();
  }
  std::vector<Buffer> g = {Buffer::of({1, 2}), Buffer::of({0, 0}), Buffer::of({0, 0}), Buffer::of({0})};
  try {
    run("LayerNormInputGrad", g, {{"rows", 2}, {"n", 2}});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rows x n"), std::string::npos) << e.what();
  }
}

// Exact worker cycles, from the named constants (cycle_model.hpp).
TEST(LayerNormCodelets, Cycles) {
  EXPECT_EQ(cyc::kLayerNormStatisticsCyclesPerVector, 2u + 2 * 3 + 10 + 10);
  EXPECT_EQ(cyc::kLayerNormaliseCyclesPerVector, 4u);
  EXPECT_EQ(cyc::kLayerNormInputGradCyclesPerVector, 3u + 3 * 2 + 3);
  // 3 rows of 8 floats: overheads 17 + 15; per row two reductions of
  // 12 + 4 and the broadcast row's 7, 4 vectors x 4; 2 vectors of rows x 28.
  EXPECT_EQ(cyclesOf("LayerNormalise", {24, 24, 3}, {{"rows", 3}, {"n", 8}, {"epsilon", 1e-3}}),
            17u + 15 + 3 * (2 * 16 + 7 + 4 * 4) + 2 * 28);
  // In half, 4 halves a vector: reductions of 12 + 2, 2 vectors x 4.
  EXPECT_EQ(cyclesOf("LayerNormalise<half>", {24, 24, 3}, {{"rows", 3}, {"n", 8}, {"epsilon", 1e-3}}),
            17u + 15 + 3 * (2 * 14 + 7 + 2 * 4) + 2 * 28);
  // An odd row of 5: reductions of 12 + 2 + 2 (the odd tail), 3 vectors x 12.
  EXPECT_EQ(cyclesOf("LayerNormInputGrad", {10, 10, 10, 2}, {{"rows", 2}, {"n", 5}}), 17u + 15 + 2 * (2 * 16 + 7 + 3 * 12));
}

}  // namespace

}  // namespace test_codelet_layer_norm
