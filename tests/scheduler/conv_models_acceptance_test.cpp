// Acceptance of convolution and pooling layers in training (issue "Models
// users bring"): conv nets built by buildTrainingGraph, compiled and run in
// the SystemC model, compute the same losses as the CPU reference over 20
// steps (relative 1e-4), from the same initial weights and batches; a conv
// net of the MNIST convnet's layer kinds learns Fashion-MNIST over 1,000
// steps. One simulation per test (per process).
#include "training_harness.hpp"

#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numeric>

namespace ipusim::testing::conv_models_acceptance_test {
namespace {

constexpr std::uint64_t kSteps = 20;

// A small synthetic job (16 tiles) over 10x10x2 images, 10 classes.
nlohmann::json job(const nlohmann::json& layers, const nlohmann::json& optimizer) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "shuffle_seed": 7, "input_shape": [10, 10, 2], "classes": 10,
                "examples": 32},
    "training": {"steps": 20, "steps_per_execution": 4},
    "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 5})");
  j["model"]["layers"] = layers;
  j["optimizer"] = optimizer;
  return j;
}

// The trained weights (conv kernels and biases included) of every replica
// match the reference's after the last step.
void expectSameWeights(const TrainingLosses& r, std::uint32_t replicas) {
  ASSERT_EQ(r.simulatedWeights.size(), replicas);
  for (std::size_t t = 0; t < r.referenceWeights.size(); ++t)
    for (std::uint32_t rep = 0; rep < replicas; ++rep) {
      const auto& ref = r.referenceWeights[t];
      ASSERT_EQ(r.simulatedWeights[rep][t].size(), ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i)
        ASSERT_NEAR(r.simulatedWeights[rep][t][i], ref[i], 1e-5 + 1e-4 * std::fabs(ref[i]))
            << "tensor " << t << " [" << i << "] replica " << rep;
    }
}

TrainingLosses run(const nlohmann::json& j) { return runTraining(scheduler::parseWorkload(j, "conv_models.json"), kSteps); }

// Conv2D same (relu), max pooling, Conv2D valid with strides 2 (tanh), an
// average pooling with same padding (windows clipped at the border), dense.
TEST(ConvModelsAcceptance, ConvSameValidStridesMaxAndAveragePooling) {
  const auto layers = nlohmann::json::parse(R"([
    {"type": "conv2d", "filters": 4, "kernel_size": [3, 3], "padding": "same", "activation": "relu"},
    {"type": "max_pooling2d", "pool_size": [2, 2]},
    {"type": "conv2d", "filters": 8, "kernel_size": [3, 3], "strides": [2, 2], "activation": "tanh"},
    {"type": "average_pooling2d", "pool_size": [2, 2], "strides": [1, 1], "padding": "same"},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])");
  const TrainingLosses r = run(job(layers, {{"type", "sgd"}, {"learning_rate", 0.1}}));
  expectSameLosses(r, kSteps);
  expectSameWeights(r, 1);
}

// The same conv net replicated over two IPUs (plain SGD, as replication
// requires): trains as one IPU on the global batch, conv kernels all-reduced.
TEST(ConvModelsAcceptance, TwoReplicasTrainAsOneIpuOnTheGlobalBatch) {
  const auto layers = nlohmann::json::parse(R"([
    {"type": "conv2d", "filters": 4, "kernel_size": [3, 3], "padding": "same", "activation": "relu"},
    {"type": "max_pooling2d", "pool_size": [2, 2]},
    {"type": "conv2d", "filters": 8, "kernel_size": [3, 3], "strides": [2, 2], "activation": "tanh"},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])");
  auto j = job(layers, {{"type", "sgd"}, {"learning_rate", 0.1}});
  j["ipu"]["num_ipus"] = 2;
  const TrainingLosses r = run(j);
  expectSameLosses(r, kSteps);
  expectSameWeights(r, 2);
}

// A first conv layer without bias and with strides (no input gradient), a
// second with its input gradient, max pooling with strides unlike its size,
// average pooling valid, two dense layers, Adam.
TEST(ConvModelsAcceptance, ConvWithoutBiasStridedPoolingTwoDenseLayers) {
  const auto layers = nlohmann::json::parse(R"([
    {"type": "conv2d", "filters": 6, "kernel_size": [2, 3], "strides": [2, 1], "use_bias": false},
    {"type": "conv2d", "filters": 5, "kernel_size": [3, 3], "padding": "same", "activation": "relu"},
    {"type": "max_pooling2d", "pool_size": [3, 3], "strides": [2, 2], "padding": "same"},
    {"type": "average_pooling2d", "pool_size": [2, 2]},
    {"type": "flatten"},
    {"type": "dense", "units": 16, "activation": "relu"},
    {"type": "dense", "units": 10, "activation": "softmax"}])");
  expectSameLosses(run(job(layers, {{"type", "adam"}, {"learning_rate", 0.01}})), kSteps);
}

// The MNIST convnet's layer kinds, scaled down so that 1,000 functional steps
// stay quick (Conv2D 8 3x3 strides 2, Conv2D 16 3x3, MaxPooling2D, Dropout,
// Flatten, Dense 32, Dropout, Dense 10, Adam) on Fashion-MNIST 28x28x1: the
// mean loss of the last 50 steps is clearly below that of the first 50.
TEST(ConvModelsAcceptance, SmallConvnetLearnsFashionMnistOver1000Steps) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "idx", "batch_size": 32, "shuffle_seed": 42, "input_shape": [28, 28, 1]},
    "model": {"layers": [
      {"type": "conv2d", "filters": 8, "kernel_size": [3, 3], "strides": [2, 2], "activation": "relu"},
      {"type": "conv2d", "filters": 16, "kernel_size": [3, 3], "activation": "relu"},
      {"type": "max_pooling2d", "pool_size": [2, 2]},
      {"type": "dropout", "rate": 0.25},
      {"type": "flatten"},
      {"type": "dense", "units": 32, "activation": "relu"},
      {"type": "dropout", "rate": 0.5},
      {"type": "dense", "units": 10, "activation": "softmax"}]},
    "optimizer": {"type": "adam"},
    "training": {"steps": 1000, "steps_per_execution": 50},
    "ipu": {"arch": "ipu2", "tiles": 64}, "seed": 1})");
  const TrainingLosses r = runTraining(scheduler::parseWorkload(j, "small_convnet.json"), 1000, false);
  ASSERT_EQ(r.simulated.size(), 1000u);
  const auto mean = [&](std::size_t from) {
    return std::accumulate(r.simulated.begin() + from, r.simulated.begin() + from + 50, 0.0) / 50.0;
  };
  const double first = mean(0), last = mean(950);
  std::printf("small convnet on Fashion-MNIST: mean loss of steps 1-50 %.4f, of steps 951-1000 %.4f\n", first, last);
  EXPECT_LT(last, 0.5 * first);
}

}  // namespace
}  // namespace ipusim::testing::conv_models_acceptance_test
