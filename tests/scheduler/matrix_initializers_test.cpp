// Keras's matrix initializers, Orthogonal and Identity
// (scheduler/models/initializer.hpp): Orthogonal's draw is gain times a
// Haar-distributed matrix with orthonormal columns (or rows) of the weight
// flattened as Keras flattens it, Identity's gain times eye(rows, cols);
// their names in every Keras spelling; a gain that is not a number, and a
// weight of a rank Keras refuses, are errors naming the layer and key.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/models/initializer.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ipusim::scheduler::matrix_initializers_test {
namespace {

using json = nlohmann::json;

InitializerSpec specOf(const json& keras) {
  return readInitializer(keras, [](const std::string& what) { throw std::invalid_argument(what); });
}

std::vector<double> valuesOf(const json& keras, const std::vector<std::uint64_t>& shape, std::uint64_t seed = 12345) {
  const InitialValues init =
      initialValuesOf(specOf(keras), shape, seed, [](const std::string& what) { throw std::invalid_argument(what); });
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  EXPECT_TRUE(init.drawn.has_value());
  return ir::drawnValues(*init.drawn, n);
}

// A rows x cols matrix (row-major): the largest |(M^T M or M M^T) - g^2 I|
// over the smaller side.
double orthogonalityError(const std::vector<double>& v, std::uint64_t rows, std::uint64_t cols, double gain) {
  const bool tall = rows >= cols;
  const std::uint64_t n = tall ? cols : rows, m = tall ? rows : cols;
  double worst = 0;
  for (std::uint64_t a = 0; a < n; ++a)
    for (std::uint64_t b = 0; b <= a; ++b) {
      double dot = 0;
      for (std::uint64_t i = 0; i < m; ++i)
        dot += tall ? v[i * cols + a] * v[i * cols + b] : v[a * cols + i] * v[b * cols + i];
      worst = std::max(worst, std::fabs(dot - (a == b ? gain * gain : 0.0)));
    }
  return worst;
}

// A Haar-distributed m x n matrix with orthonormal columns has entries of
// mean 0, second moment exactly 1/m on average (each column has norm 1), and
// fourth moment 3 / (m (m + 2)) (a coordinate of a point uniform on the
// sphere); its values rounded to float (the device's).
void expectHaarOrthogonal(const json& keras, const std::vector<std::uint64_t>& shape, double gain) {
  std::uint64_t rows = 1;
  for (std::size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  const std::uint64_t cols = shape.back(), n = rows * cols, m = std::max(rows, cols);
  const std::vector<double> v = valuesOf(keras, shape);
  ASSERT_EQ(v.size(), n);
  EXPECT_LT(orthogonalityError(v, rows, cols, gain), 1e-5 * gain * gain) << keras;
  double mean = 0, second = 0, fourth = 0, largest = 0;
  for (double x : v) {
    const double y = x / gain;
    mean += y / double(n), second += y * y / double(n), fourth += y * y * y * y / double(n);
    largest = std::max(largest, std::fabs(x));
  }
  // Standard error of the mean: sqrt(1 / (m n)).
  EXPECT_NEAR(mean, 0.0, 5 / std::sqrt(double(m) * double(n))) << keras;
  EXPECT_NEAR(second * double(m), 1.0, 1e-5) << keras;
  EXPECT_NEAR(fourth * double(m) * double(m + 2) / 3, 1.0, 0.15) << keras;
  EXPECT_LE(largest, std::fabs(gain) * (1 + 1e-6)) << keras;  // entries of unit vectors
}

TEST(MatrixInitializers, OrthogonalIsGainTimesAHaarOrthogonalMatrix) {
  // A Dense kernel 256 x 128: orthonormal columns.
  expectHaarOrthogonal(json::parse(R"({"class_name": "Orthogonal", "config": {"gain": 1.0, "seed": null}})"), {256, 128}, 1.0);
  // A conv kernel 3x3x16x32, flattened as Keras does: 144 x 32.
  expectHaarOrthogonal(json::parse(R"({"module": "keras.initializers", "class_name": "OrthogonalInitializer",
                                       "config": {"gain": 2.0, "seed": 5}, "registered_name": null})"),
                       {3, 3, 16, 32}, 2.0);
  // Wider than tall (an LSTM's recurrent kernel, units x 4 units): orthonormal rows.
  expectHaarOrthogonal(json("orthogonal"), {64, 256}, 1.0);
}

// Q's columns times the signs of R's diagonal: without them a Householder
// QR's first column points away from the draw's first entry (Q_00 < 0
// always), and the matrix is not Haar. Over many draws each diagonal entry
// has mean 0 and either sign half of the time.
TEST(MatrixInitializers, OrthogonalSignsMakeItUniform) {
  for (const std::vector<std::uint64_t>& shape : {std::vector<std::uint64_t>{6, 4}, std::vector<std::uint64_t>{4, 6}}) {
    const int draws = 400;
    std::vector<double> diagonal(4, 0.0);
    int positive = 0;
    for (int s = 0; s < draws; ++s) {
      const std::vector<double> v = valuesOf(json("Orthogonal"), shape, 1000 + s);
      for (int i = 0; i < 4; ++i) diagonal[i] += v[i * shape[1] + i] / draws;
      positive += v[0] > 0;
    }
    // Each entry's deviation is sqrt(1/6): the mean of 400 within 0.1 is 4.9 standard errors.
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(diagonal[i], 0.0, 0.1) << shape[0] << " x " << shape[1] << ", entry " << i;
    EXPECT_NEAR(positive, draws / 2, 50) << shape[0] << " x " << shape[1];
  }
  // Different seeds, different matrices; the same seed, the same one.
  EXPECT_NE(valuesOf(json("orthogonal"), {8, 8}, 1), valuesOf(json("orthogonal"), {8, 8}, 2));
  EXPECT_EQ(valuesOf(json("orthogonal"), {8, 8}, 1), valuesOf(json("orthogonal"), {8, 8}, 1));
}

TEST(MatrixInitializers, IdentityIsGainTimesEye) {
  for (const std::vector<std::uint64_t>& shape : {std::vector<std::uint64_t>{3, 5}, std::vector<std::uint64_t>{5, 3},
                                                 std::vector<std::uint64_t>{4, 4}}) {
    const std::vector<double> half = valuesOf(json::parse(R"({"class_name": "Identity", "config": {"gain": 0.5}})"), shape);
    const std::vector<double> one = valuesOf(json("identity"), shape);
    for (std::uint64_t i = 0; i < shape[0]; ++i)
      for (std::uint64_t c = 0; c < shape[1]; ++c) {
        EXPECT_EQ(half[i * shape[1] + c], i == c ? 0.5 : 0.0);
        EXPECT_EQ(one[i * shape[1] + c], i == c ? 1.0 : 0.0);
      }
  }
}

TEST(MatrixInitializers, EveryKerasSpellingIsRead) {
  struct Case {
    const char* keras;
    InitializerSpec::Kind kind;
    double gain;
  };
  using K = InitializerSpec::Kind;
  const std::vector<Case> cases = {
      {R"("orthogonal")", K::Orthogonal, 1},  // Keras 1 and 2 names
      {R"("Orthogonal")", K::Orthogonal, 1},
      {R"({"class_name": "Orthogonal", "config": {"gain": 1.5, "seed": null}})", K::Orthogonal, 1.5},  // tf-keras
      {R"({"class_name": "OrthogonalInitializer", "config": {"gain": -1.0, "seed": 3}})", K::Orthogonal, -1},  // Keras 3.0-3.3
      {R"({"module": "keras.initializers", "class_name": "Orthogonal", "config": {"seed": null, "gain": 0.5},
          "registered_name": null})", K::Orthogonal, 0.5},  // Keras 3.4+
      {R"("identity")", K::Identity, 1},
      {R"({"class_name": "Identity", "config": {"gain": 2.0}})", K::Identity, 2},  // tf-keras
      // Keras 3 writes no config for Identity (its gain is not saved): gain 1, as Keras reloads it.
      {R"({"module": "keras.initializers", "class_name": "IdentityInitializer", "config": {}, "registered_name": null})",
       K::Identity, 1},
      {R"({"class_name": "Identity", "config": {"gain": null}})", K::Identity, 1},
  };
  for (const Case& c : cases) {
    const InitializerSpec s = specOf(json::parse(c.keras));
    EXPECT_EQ(s.kind, c.kind) << c.keras;
    EXPECT_EQ(s.a, c.gain) << c.keras;
  }
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MatrixInitializers, AGainThatIsNotAFiniteNumberIsRefused) {
  json infinite = json::parse(R"({"class_name": "Orthogonal", "config": {"seed": null}})");
  infinite["config"]["gain"] = std::numeric_limits<double>::infinity();
  EXPECT_NE(errorOf([&] { specOf(infinite); }).find("gain: expected a finite number, got"), std::string::npos);
  const std::string text = errorOf([] { specOf(json::parse(R"({"class_name": "Identity", "config": {"gain": "2"}})")); });
  EXPECT_NE(text.find(R"(gain: expected a finite number, got "2")"), std::string::npos) << text;
}

// The weights' shapes are known when the graph is built: a Keras file whose
// Identity draws a conv kernel, or whose Orthogonal draws a bias, is
// refused there, naming the layer, the key and the shape (Keras raises a
// ValueError for both).
json sequential(const json& layers) {
  return {{"class_name", "Sequential"}, {"keras_version", "2.12.0"}, {"config", {{"name", "s"}, {"layers", layers}}}};
}

std::string buildError(const json& keras, const std::vector<std::uint64_t>& inputShape) {
  return errorOf([&] {
    const KerasModel m = parseKerasModel(keras, "model.json");
    Workload w;
    w.layers = m.layers;
    w.dataset.inputShape = inputShape;
    w.dataset.features = 1;
    for (auto d : inputShape) w.dataset.features *= d;
    buildTrainingGraph(w);
  });
}

TEST(MatrixInitializers, ShapesKerasRefusesAreNamed) {
  const std::string conv = buildError(sequential(json::parse(R"([
    {"class_name": "Conv2D", "config": {"name": "conv", "filters": 4, "kernel_size": [3, 3], "batch_input_shape": [null, 8, 8, 1],
      "kernel_initializer": {"class_name": "Identity", "config": {"gain": 1.0}}}},
    {"class_name": "Flatten", "config": {"name": "flat"}},
    {"class_name": "Dense", "config": {"name": "out", "units": 10, "activation": "softmax"}}])")), {8, 8, 1});
  EXPECT_NE(conv.find("layer 'conv': kernel_initializer: Identity needs a 2-D weight"), std::string::npos) << conv;
  EXPECT_NE(conv.find("got shape [3, 3, 1, 4]"), std::string::npos) << conv;
  const std::string bias = buildError(sequential(json::parse(R"([
    {"class_name": "Dense", "config": {"name": "d", "units": 16, "batch_input_shape": [null, 8],
      "bias_initializer": {"class_name": "Orthogonal", "config": {"gain": 1.0, "seed": null}}}},
    {"class_name": "Dense", "config": {"name": "out", "units": 10, "activation": "softmax"}}])")), {8});
  EXPECT_NE(bias.find("layer 'd': bias_initializer: Orthogonal needs a weight of at least 2 dimensions"), std::string::npos)
      << bias;
  EXPECT_NE(bias.find("got shape [16]"), std::string::npos) << bias;
}

// A Keras 1 file's init: "orthogonal" and "identity" (read as Keras 2.0-2.2
// converted them: Keras 2's Orthogonal and Identity of gain 1; Keras 1
// itself scaled its orthogonal by 1.1), and errors name the key the file
// wrote.
TEST(MatrixInitializers, Keras1InitNames) {
  const json layers = json::parse(R"([
    {"class_name": "Dense", "config": {"name": "dense_1", "output_dim": 16, "input_dim": 8, "init": "orthogonal",
      "activation": "relu", "batch_input_shape": [null, 8], "input_dtype": "float32", "trainable": true, "bias": true,
      "W_regularizer": null, "b_regularizer": null, "activity_regularizer": null, "W_constraint": null, "b_constraint": null}},
    {"class_name": "Dense", "config": {"name": "dense_2", "output_dim": 10, "input_dim": 16, "init": "identity",
      "activation": "softmax", "trainable": true, "bias": true, "W_regularizer": null, "b_regularizer": null,
      "activity_regularizer": null, "W_constraint": null, "b_constraint": null}}])");
  auto keras1 = [](const json& list) { return json{{"class_name", "Sequential"}, {"config", list}, {"keras_version", "1.2.2"}}; };
  const KerasModel m = parseKerasModel(keras1(layers), "keras1.json");
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].initializers.at("kernel").kind, InitializerSpec::Kind::Orthogonal);
  EXPECT_EQ(m.layers[0].initializers.at("kernel").a, 1.0);
  EXPECT_EQ(m.layers[1].initializers.at("kernel").kind, InitializerSpec::Kind::Identity);
  const std::string conv = buildError(keras1(json::parse(R"([
    {"class_name": "Convolution2D", "config": {"name": "convolution2d_1", "nb_filter": 4, "nb_row": 3, "nb_col": 3,
      "init": "identity", "border_mode": "valid", "subsample": [1, 1], "dim_ordering": "tf", "activation": "linear",
      "batch_input_shape": [null, 8, 8, 1], "trainable": true, "bias": true, "W_regularizer": null,
      "b_regularizer": null, "activity_regularizer": null, "W_constraint": null, "b_constraint": null}},
    {"class_name": "Flatten", "config": {"name": "flatten_1", "trainable": true}},
    {"class_name": "Dense", "config": {"name": "dense_1", "output_dim": 10, "init": "glorot_uniform",
      "activation": "softmax", "trainable": true, "bias": true}}])")), {8, 8, 1});
  EXPECT_NE(conv.find("layer 'convolution2d_1': init: Identity needs a 2-D weight"), std::string::npos) << conv;
}

}  // namespace
}  // namespace ipusim::scheduler::matrix_initializers_test
