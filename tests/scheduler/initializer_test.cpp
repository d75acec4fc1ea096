// Keras's initializers (scheduler/models/initializer.hpp): each draw has
// Keras's distribution (mean, variance, bounds within sampling error over a
// large tensor); a Keras file's initializers reach the weights they name;
// one not modelled is refused naming the layer and key.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/models/initializer.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ipusim::scheduler::initializer_test {
namespace {

struct Moments {
  double mean = 0, variance = 0, lo = 0, hi = 0;
};

Moments momentsOf(const std::string& keras, const std::vector<std::uint64_t>& shape) {
  const InitializerSpec spec =
      readInitializer(nlohmann::json::parse(keras), [](const std::string& what) { throw std::invalid_argument(what); });
  const InitialValues init =
      initialValuesOf(spec, shape, 12345, [](const std::string& what) { throw std::invalid_argument(what); });
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<double> v = init.drawn ? ir::drawnValues(*init.drawn, n) : std::vector<double>(n, init.fill);
  Moments m{0, 0, *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
  for (double x : v) m.mean += x / double(n);
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean) / double(n);
  return m;
}

// 512 x 256 = 131,072 draws: the sample mean and variance are within a few
// standard errors (about 0.3% of sigma for the mean, 0.4% for the variance).
void expectMoments(const std::string& keras, double mean, double stddev, double bound) {
  const Moments m = momentsOf(keras, {512, 256});
  EXPECT_NEAR(m.mean, mean, 0.015 * stddev + 1e-12) << keras;
  EXPECT_NEAR(std::sqrt(m.variance), stddev, 0.02 * stddev) << keras;
  EXPECT_GE(m.lo, mean - bound - 1e-6) << keras;
  EXPECT_LE(m.hi, mean + bound + 1e-6) << keras;
}

TEST(Initializers, DrawsHaveKerasDistributions) {
  const double fanIn = 512, fanOut = 256, avg = (fanIn + fanOut) / 2;
  const double cut = 0.87962566103423978;  // a standard normal's deviation once cut at two deviations
  // Uniform in [-l, l]: deviation l / sqrt(3).
  const double glorot = std::sqrt(6 / (fanIn + fanOut));
  expectMoments(R"("glorot_uniform")", 0, glorot / std::sqrt(3.0), glorot);
  expectMoments(R"({"class_name": "HeUniform", "config": {"seed": null}})", 0, std::sqrt(6 / fanIn) / std::sqrt(3.0),
                std::sqrt(6 / fanIn));
  expectMoments(R"("lecun_uniform")", 0, std::sqrt(3 / fanIn) / std::sqrt(3.0), std::sqrt(3 / fanIn));
  // Truncated normal at two deviations: deviation sqrt(scale / n), bounds 2 sigma / 0.8796.
  expectMoments(R"("he_normal")", 0, std::sqrt(2 / fanIn), 2 * std::sqrt(2 / fanIn) / cut);
  expectMoments(R"({"class_name": "GlorotNormal", "config": {}})", 0, std::sqrt(1 / avg), 2 * std::sqrt(1 / avg) / cut);
  expectMoments(R"({"class_name": "VarianceScaling", "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}})",
                0, std::sqrt(2 / fanOut), 2 * std::sqrt(2 / fanOut) / cut);
  expectMoments(R"({"class_name": "VarianceScaling", "config": {"scale": 1.0, "mode": "fan_in", "distribution": "normal"}})",
                0, std::sqrt(1 / fanIn), 2 * std::sqrt(1 / fanIn) / cut);  // tf.keras: "normal" is truncated
  expectMoments(R"({"class_name": "VarianceScaling", "config": {"scale": 3.0, "mode": "fan_avg", "distribution": "untruncated_normal"}})",
                0, std::sqrt(3 / avg), 7 * std::sqrt(3 / avg));
  // The random ones with their parameters (Keras's defaults: +-0.05, deviation 0.05).
  expectMoments(R"({"class_name": "RandomUniform", "config": {"minval": 0.5, "maxval": 1.5}})", 1.0, 1 / std::sqrt(12.0), 0.5);
  expectMoments(R"("uniform")", 0, 0.05 / std::sqrt(3.0), 0.05);  // Keras 1's name
  expectMoments(R"({"class_name": "RandomNormal", "config": {"mean": 0.1, "stddev": 0.02}})", 0.1, 0.02, 7 * 0.02);
  expectMoments(R"({"class_name": "TruncatedNormal", "config": {"mean": 0.0, "stddev": 0.05}})", 0, 0.05 * cut, 0.1);
  // Constants.
  const Moments c = momentsOf(R"({"class_name": "Constant", "config": {"value": 0.25}})", {4, 4});
  EXPECT_EQ(c.lo, 0.25);
  EXPECT_EQ(c.hi, 0.25);
  EXPECT_EQ(momentsOf(R"("ones")", {3}).lo, 1.0);
}

TEST(Initializers, NotModelledOrOutOfRangeAreRefused) {
  auto error = [](const std::string& keras) {
    try {
      readInitializer(nlohmann::json::parse(keras), [](const std::string& what) { throw std::invalid_argument(what); });
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // Keras 3's STFT kernels (for its STFTSpectrogram layer) are not modelled;
  // Orthogonal and Identity are (matrix_initializers_test.cpp).
  EXPECT_NE(error(R"({"class_name": "STFTInitializer", "config": {"side": "real", "window": "hann"}})").find("is not modelled"),
            std::string::npos);
  EXPECT_NE(error(R"({"class_name": "VarianceScaling", "config": {"mode": "fan_sum"}})").find("mode: 'fan_sum'"),
            std::string::npos);
  EXPECT_NE(error(R"({"class_name": "RandomNormal", "config": {"stddev": -1}})").find("stddev"), std::string::npos);
  EXPECT_NE(error(R"({"class_name": "RandomUniform", "config": {"minval": 1, "maxval": 0}})").find("above maxval"),
            std::string::npos);
}

// A Keras file's initializers reach the weights: he_normal kernels and a
// constant bias; the default Glorot kernel keeps its own draw.
TEST(Initializers, KerasFileInitializersReachTheirWeights) {
  nlohmann::json j = nlohmann::json::parse(R"({"class_name": "Sequential", "keras_version": "2.12.0", "config": {"name": "s", "layers": [
    {"class_name": "Dense", "config": {"name": "d1", "units": 16, "activation": "relu", "batch_input_shape": [null, 8],
      "kernel_initializer": {"class_name": "HeNormal", "config": {"seed": null}},
      "bias_initializer": {"class_name": "Constant", "config": {"value": 0.1}}}},
    {"class_name": "Dense", "config": {"name": "d2", "units": 10, "activation": "softmax",
      "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}}}]}})");
  const KerasModel m = parseKerasModel(j, "model.json");
  ASSERT_EQ(m.layers[0].initializers.count("kernel"), 1u);
  EXPECT_EQ(m.layers[0].initializers.at("kernel").kind, InitializerSpec::Kind::VarianceScaling);
  EXPECT_TRUE(m.layers[1].initializers.empty());  // Keras's default: the layer's own draw
  Workload w;
  w.layers = m.layers;
  w.dataset.inputShape = {8};
  w.dataset.features = 8;
  const OpGraph g = buildTrainingGraph(w);
  for (std::size_t v : g.weights) {
    const Value& value = g.values[v];
    if (value.name == "d1/kernel") {
      ASSERT_TRUE(value.drawnInit);
      EXPECT_EQ(value.drawnInit->distribution, ir::DrawnInit::Distribution::TruncatedNormal);
      EXPECT_NEAR(value.drawnInit->stddev, std::sqrt(2.0 / 8) / 0.87962566103423978, 1e-12);
    } else if (value.name == "d1/bias") {
      EXPECT_FALSE(value.drawnInit);
      EXPECT_EQ(value.initialFill, 0.1);
    } else if (value.name == "d2/kernel") {
      ASSERT_TRUE(value.drawnInit);
      EXPECT_EQ(value.drawnInit->distribution, ir::DrawnInit::Distribution::Uniform);
      EXPECT_NEAR(value.drawnInit->limit, std::sqrt(6.0 / 26), 1e-12);
    }
  }
}

}  // namespace
}  // namespace ipusim::scheduler::initializer_test
