// SoftmaxCrossEntropy (+Grad): values against a double-precision reference,
// stability with large logits, label errors, cycles.
#include "model/codelets/cycle_model.hpp"
#include "test_codelet_util.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace test_codelet_softmax {

using namespace ipusim::model;
using namespace ipusim::model::testing;
namespace cyc = ipusim::model::cycles;

namespace {

constexpr std::size_t kRows = 4, kClasses = 10;

struct Forward {
  std::vector<float> probs, loss;
};

Forward runForward(const std::vector<float>& logits, const std::vector<std::int32_t>& labels, std::size_t rows,
                   std::size_t classes) {
  std::vector<Buffer> buffers = {Buffer::of(logits), Buffer::ofInts(labels),
                                 Buffer::of(std::vector<float>(rows * classes, -1.0f)),
                                 Buffer::of(std::vector<float>(rows, -1.0f))};
  run("SoftmaxCrossEntropy", buffers, {{"rows", rows}, {"classes", classes}});
  return {buffers[2].floats, buffers[3].floats};
}

}  // namespace

TEST(SoftmaxCrossEntropy, MatchesReference) {
  auto logits = pseudoRandom(kRows * kClasses, 51);
  for (auto& x : logits) x *= 4.0f;
  const std::vector<std::int32_t> labels = {3, 0, 9, 5};
  const Forward result = runForward(logits, labels, kRows, kClasses);
  for (std::size_t r = 0; r < kRows; ++r) {
    double sum = 0;
    for (std::size_t c = 0; c < kClasses; ++c) sum += std::exp(double(logits[r * kClasses + c]));
    double probSum = 0;
    for (std::size_t c = 0; c < kClasses; ++c) {
      const double expected = std::exp(double(logits[r * kClasses + c])) / sum;
      EXPECT_NEAR(result.probs[r * kClasses + c], expected, 1e-6) << r << "," << c;
      probSum += result.probs[r * kClasses + c];
    }
    EXPECT_NEAR(probSum, 1.0, 1e-6);
    const double expectedLoss = -std::log(std::exp(double(logits[r * kClasses + labels[r]])) / sum);
    EXPECT_NEAR(result.loss[r], expectedLoss, 1e-5) << r;
  }
}

TEST(SoftmaxCrossEntropy, StableWithLargeLogits) {
  // exp(1000) overflows float (and double); subtracting the row max keeps it finite.
  const std::vector<float> logits = {1000.0f, 999.0f, 998.0f, -1000.0f, 0.0f, 1000.0f};
  const std::vector<std::int32_t> labels = {0, 0};
  const Forward result = runForward(logits, labels, 2, 3);
  const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), z = 1 + e1 + e2;
  EXPECT_NEAR(result.probs[0], 1 / z, 1e-6);
  EXPECT_NEAR(result.probs[1], e1 / z, 1e-6);
  EXPECT_NEAR(result.probs[2], e2 / z, 1e-6);
  EXPECT_NEAR(result.loss[0], std::log(z), 1e-5);
  // Row 2: the label's probability underflows to 0 in float, yet the loss is
  // the finite 2000 (+log 1), not -log(0) = inf.
  EXPECT_EQ(result.probs[3], 0.0f);
  EXPECT_FLOAT_EQ(result.probs[5], 1.0f);
  EXPECT_TRUE(std::isfinite(result.loss[1]));
  EXPECT_NEAR(result.loss[1], 2000.0, 1e-3);
}

TEST(SoftmaxCrossEntropy, LabelOutOfRangeIsAClearError) {
  try {
    runForward(std::vector<float>(6, 0.0f), {1, 3}, 2, 3);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SoftmaxCrossEntropy: labels[1] = 3, expected a class in [0, 3)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(runForward(std::vector<float>(3, 0.0f), {-1}, 1, 3), std::invalid_argument);
}

TEST(SoftmaxCrossEntropyGrad, IsScaledProbsMinusOneHot) {
  const auto probs = pseudoRandom(kRows * kClasses, 61);
  const std::vector<std::int32_t> labels = {9, 2, 0, 7};
  std::vector<Buffer> buffers = {Buffer::of(probs), Buffer::ofInts(labels),
                                 Buffer::of(std::vector<float>(probs.size(), 99.0f))};
  const float scale = 1.0f / kRows;
  run("SoftmaxCrossEntropyGrad", buffers, {{"rows", kRows}, {"classes", kClasses}, {"scale", scale}});
  for (std::size_t r = 0; r < kRows; ++r)
    for (std::size_t c = 0; c < kClasses; ++c) {
      const float onehot = std::int32_t(c) == labels[r] ? 1.0f : 0.0f;
      EXPECT_FLOAT_EQ(buffers[2].floats[r * kClasses + c], scale * (probs[r * kClasses + c] - onehot));
    }
  std::vector<Buffer> bad = {Buffer::of({0.5f, 0.5f}), Buffer::ofInts({2}), Buffer::of({0, 0})};
  EXPECT_THROW(run("SoftmaxCrossEntropyGrad", bad, {{"rows", 1}, {"classes", 2}}), std::invalid_argument);
}

TEST(SoftmaxCrossEntropy, ValidationNamesTheField) {
  const auto& sce = CodeletRegistry::instance().get("SoftmaxCrossEntropy");
  try {
    sce.validate(shapeOf(sce, {40, 4, 40, 5}, {{"rows", 4}, {"classes", 10}}));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("field 'loss' has 5 elements, expected 4 (rows)"), std::string::npos)
        << e.what();
  }
}

TEST(SoftmaxCrossEntropy, Cycles) {
  // Per row, classes = 10 -> V = 5 vectors.
  const ipusim::ir::Cycles fold = cyc::kContinuousReduceRowOverhead + 10 / 2;  // max, then sum
  const ipusim::ir::Cycles forwardRow = 2 * fold +
                                        5 * (2 * cyc::kAddSubMulCyclesPerVector + cyc::kExpCyclesPerVector) +
                                        cyc::kScalarReciprocalCycles + cyc::kLabelLookupCycles + cyc::kScalarLogCycles;
  EXPECT_EQ(cyclesOf("SoftmaxCrossEntropy", {160, 16, 160, 16}, {{"rows", 16}, {"classes", 10}}),
            cyc::kContinuousReduceOverhead + 16 * forwardRow);
  // By hand: 2 x 17 + 5 x (3 + 3 + 6) + 10 + 4 + 12 = 120 per row.
  EXPECT_EQ(cyclesOf("SoftmaxCrossEntropy", {160, 16, 160, 16}, {{"rows", 16}, {"classes", 10}}), 17u + 16u * 120u);
  // The gradient: popnn LossCrossEntropyTransform, 20 + 9 per element.
  EXPECT_EQ(cyclesOf("SoftmaxCrossEntropyGrad", {160, 16, 160}, {{"rows", 16}, {"classes", 10}}),
            cyc::kLossTransformOverhead + 160 * cyc::kLossTransformCyclesPerElement);
}

// The weighted gradient (a masked loss's): each row's gradient times its weight.
TEST(SoftmaxCrossEntropyGradWeighted, ScalesEachRowByItsWeight) {
  const auto probs = pseudoRandom(kRows * kClasses, 52);
  const std::vector<std::int32_t> labels = {3, 0, 9, 5};
  const std::vector<float> weights = {2.0f, 0.0f, 0.5f, 1.0f};
  std::vector<Buffer> plain = {Buffer::of(probs), Buffer::ofInts(labels), Buffer::of(std::vector<float>(kRows * kClasses))};
  run("SoftmaxCrossEntropyGrad", plain, {{"rows", kRows}, {"classes", kClasses}, {"scale", 0.25}});
  std::vector<Buffer> weighted = {Buffer::of(probs), Buffer::ofInts(labels), Buffer::of(weights),
                                  Buffer::of(std::vector<float>(kRows * kClasses))};
  run("SoftmaxCrossEntropyGradWeighted", weighted, {{"rows", kRows}, {"classes", kClasses}, {"scale", 0.25}});
  for (std::size_t r = 0; r < kRows; ++r)
    for (std::size_t c = 0; c < kClasses; ++c)
      EXPECT_FLOAT_EQ(weighted[3].floats[r * kClasses + c], weights[r] * plain[2].floats[r * kClasses + c]) << r << "," << c;
}

}  // namespace test_codelet_softmax
