// Regression targets of an output's own shape (issue "The whole Keras
// file": data for any model): an autoencoder's image output under
// mean_squared_error, one regressed value under mean_absolute_error while
// the dataset has 10 classes, and a segmentation-like sequence under huber
// train against the CPU reference within 1e-4 over 20 steps; the targets
// the host streams are each label's pattern (numeric::regressionTarget); a
// classification loss on an image output is still refused, by name.
#include "training_harness.hpp"

#include "model/numeric/regression_target.hpp"
#include "scheduler/models/workload.hpp"
#include "sim/dataset/batch_source.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace ipusim::testing::regression_targets_test {
namespace {

constexpr std::uint64_t kSteps = 20;
const nlohmann::json kSgd = {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}};

nlohmann::json withLoss(nlohmann::json j, const char* loss) {
  j["loss"] = nlohmann::json::parse(loss);
  return j;
}

// A small convolutional autoencoder: 8x8x1 in, 8x8x1 out.
constexpr const char* kAutoencoder = R"([
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu"},
  {"type": "max_pooling2d", "pool_size": 2},
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu"},
  {"type": "up_sampling2d", "size": 2},
  {"type": "conv2d", "filters": 1, "kernel_size": 3, "padding": "same", "activation": "sigmoid"}])";

TEST(RegressionTargets, AutoencoderImageOutput) {
  const nlohmann::json j = withLoss(smallJob(kAutoencoder, {8, 8, 1}, kSgd, 3), R"("mean_squared_error")");
  const scheduler::Workload w = scheduler::parseWorkload(j, "autoencoder.json");
  EXPECT_EQ(w.loss.targetElements, 64u);
  EXPECT_EQ(w.loss.targetWidth(w.dataset.classes), 64u);
  expectSameTraining(j, "autoencoder.json", kSteps);
}

TEST(RegressionTargets, OneValueAmongTenClasses) {
  const nlohmann::json j = withLoss(smallJob(R"([{"type": "dense", "units": 16, "activation": "tanh"},
                                                 {"type": "dense", "units": 1}])", {12}, kSgd, 4), R"("mean_absolute_error")");
  EXPECT_EQ(scheduler::parseWorkload(j, "regressor.json").loss.targetElements, 1u);
  expectSameTraining(j, "regressor.json", kSteps);
}

TEST(RegressionTargets, SequenceOutputUnderHuber) {
  const nlohmann::json j = withLoss(smallJob(R"([{"type": "conv1d", "filters": 4, "kernel_size": 3, "padding": "same"},
                                                 {"type": "conv1d", "filters": 2, "kernel_size": 3, "padding": "same"}])",
                                             {6, 3}, kSgd, 5),
                                    R"({"type": "huber", "delta": 0.5})");
  expectSameTraining(j, "sequence.json", kSteps);
}

// The one-hot width stays the classes' when the output has that many units.
TEST(RegressionTargets, OneHotWhenTheOutputHasTheClasses) {
  const nlohmann::json j = withLoss(smallJob(R"([{"type": "dense", "units": 10}])", {12}, kSgd, 4), R"("mean_squared_error")");
  EXPECT_EQ(scheduler::parseWorkload(j, "one_hot.json").loss.targetElements, 0u);
}

TEST(RegressionTargets, TheHostStreamsEachLabelsPattern) {
  scheduler::LossSpec loss;
  loss.type = "mean_squared_error";
  loss.targetElements = 3;
  const std::vector<std::uint8_t> bytes = sim::dataset::labelBytes({2, 7}, loss, 10);
  ASSERT_EQ(bytes.size(), 6 * sizeof(float));
  std::vector<float> targets(6);
  std::memcpy(targets.data(), bytes.data(), bytes.size());
  for (std::size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(targets[e], numeric::regressionTarget(2, e));
    EXPECT_EQ(targets[3 + e], numeric::regressionTarget(7, e));
    EXPECT_GE(targets[e], 0.0f);
    EXPECT_LT(targets[e], 1.0f);
  }
  EXPECT_NE(targets[0], targets[3]);  // each class its own pattern
}

TEST(RegressionTargets, ClassificationOfAnImageIsStillRefused) {
  const nlohmann::json j = withLoss(smallJob(kAutoencoder, {8, 8, 1}, kSgd, 3), R"({"type": "binary_crossentropy"})");
  try {
    scheduler::parseWorkload(j, "segmentation.json");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("not a vector"), std::string::npos) << what;
    EXPECT_NE(what.find("regression losses only"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace ipusim::testing::regression_targets_test
