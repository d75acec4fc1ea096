// GaussianNoise and GaussianDropout (issue "The whole Keras file": a public
// file's layer): in training, noise added (stddev) or multiplied (rate), new
// each step, its gradient passed through or scaled by the same noise. A
// model with both trains as the CPU reference does (the same draws,
// numeric::standardNormal) over 20 steps within 1e-4; the draws are standard
// normal; bad values are refused by name; a zero stddev builds nothing.
#include "training_harness.hpp"

#include "model/numeric/gaussian_noise.hpp"
#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ipusim::testing::gaussian_noise_test {
namespace {

constexpr std::uint64_t kSteps = 20;
const nlohmann::json kSgd = {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}};

constexpr const char* kNoisy = R"([
  {"type": "dense", "units": 24, "activation": "relu"},
  {"type": "gaussian_noise", "stddev": 0.3},
  {"type": "dense", "units": 24, "activation": "tanh"},
  {"type": "gaussian_dropout", "rate": 0.25, "seed": 11},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(GaussianNoise, TrainsAsTheReference) { expectSameTraining(smallJob(kNoisy, {16}, kSgd, 7), "noisy.json", kSteps); }

TEST(GaussianNoise, DrawsAreStandardNormal) {
  double sum = 0, squares = 0;
  const std::uint64_t n = 200000;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double v = numeric::standardNormal(42, 3, i);
    sum += v, squares += v * v;
  }
  const double mean = sum / n, variance = squares / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 5 / std::sqrt(double(n)));  // 5 standard errors
  EXPECT_NEAR(variance, 1.0, 5 * std::sqrt(2.0 / double(n)));
  EXPECT_NE(numeric::standardNormal(42, 3, 0), numeric::standardNormal(42, 4, 0));  // new each step
}

TEST(GaussianNoise, ZeroStddevBuildsNothing) {
  const scheduler::Workload w = scheduler::parseWorkload(
      smallJob(R"([{"type": "gaussian_noise", "stddev": 0}, {"type": "dense", "units": 10, "activation": "softmax"}])", {16}, kSgd, 1),
      "quiet.json");
  const scheduler::CompiledWorkload c = scheduler::compile(w);
  for (const auto& cs : c.exe.computeSets)
    for (const auto& v : cs.vertices) EXPECT_EQ(v.codelet.find("GaussianNoise"), std::string::npos) << v.codelet;
}

std::string errorOf(const char* layers) {
  try {
    scheduler::parseWorkload(smallJob(layers, {16}, kSgd, 1), "bad.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(GaussianNoise, BadValuesAreNamed) {
  const std::string negative = errorOf(R"([{"type": "gaussian_noise", "stddev": -1}, {"type": "dense", "units": 10}])");
  EXPECT_NE(negative.find("stddev: expected a finite number >= 0"), std::string::npos) << negative;
  const std::string missing = errorOf(R"([{"type": "gaussian_noise"}, {"type": "dense", "units": 10}])");
  EXPECT_NE(missing.find("stddev: missing"), std::string::npos) << missing;
  const std::string rate = errorOf(R"([{"type": "gaussian_dropout", "rate": 1}, {"type": "dense", "units": 10}])");
  EXPECT_NE(rate.find("rate"), std::string::npos) << rate;
}

}  // namespace
}  // namespace ipusim::testing::gaussian_noise_test
