// Keras files whose kernels are drawn by Orthogonal and Identity
// (tests/data/keras/make_matrix_initializers.py, as tf-keras and Keras 3
// write them) train on the simulated IPU as the CPU reference does from the
// same drawn weights, and the executable's kernels are those draws: gain
// times orthonormal rows or columns, gain times eye.
#include "scheduler/models/workload.hpp"
#include "training_harness.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ipusim::testing::matrix_initializers_keras_test {
namespace {

constexpr std::uint64_t kSteps = 20;

const ir::Tensor& tensorNamed(const ir::Executable& exe, const std::string& name) {
  for (const auto& t : exe.tensors)
    if (t.name == name) return t;
  throw std::invalid_argument("no tensor " + name);
}

// The largest |M^T M - g^2 I| (tall) or |M M^T - g^2 I| (wide) of a kernel.
double orthogonalityError(const std::vector<double>& v, std::size_t rows, std::size_t cols, double gain) {
  const bool tall = rows >= cols;
  const std::size_t n = tall ? cols : rows, m = tall ? rows : cols;
  double worst = 0;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      double dot = 0;
      for (std::size_t i = 0; i < m; ++i) dot += tall ? v[i * cols + a] * v[i * cols + b] : v[a * cols + i] * v[b * cols + i];
      worst = std::max(worst, std::fabs(dot - (a == b ? gain * gain : 0.0)));
    }
  return worst;
}

void expectKerasFileTrains(const std::string& file, double identityGain) {
  nlohmann::json j = smallJob("[]", {8}, {{"type", "adam"}, {"learning_rate", 0.01}}, 5);
  j["model"] = {{"keras", sourcePath("tests/data/keras/" + file)}};
  const TrainingLosses r = runTraining(scheduler::parseWorkload(j, "keras.json"), kSteps);
  expectSameLosses(r, kSteps);
  expectSameWeights(r);
  const ir::Executable& exe = r.compiled.exe;
  const std::vector<double> rotate = ir::initialValues(tensorNamed(exe, "rotate/kernel"));
  ASSERT_EQ(rotate.size(), 8u * 16u);
  EXPECT_LT(orthogonalityError(rotate, 8, 16, 1.0), 1e-5) << file;
  const std::vector<double> skip = ir::initialValues(tensorNamed(exe, "skip/kernel"));
  ASSERT_EQ(skip.size(), 16u * 16u);
  for (std::size_t i = 0; i < 16; ++i)
    for (std::size_t c = 0; c < 16; ++c) EXPECT_EQ(skip[i * 16 + c], i == c ? identityGain : 0.0) << file;
  const std::vector<double> output = ir::initialValues(tensorNamed(exe, "output/kernel"));
  EXPECT_LT(orthogonalityError(output, 16, 10, 2.0), 4e-5) << file;
}

TEST(MatrixInitializersAcceptance, KerasTf2FileTrains) { expectKerasFileTrains("matrix_initializers_tf2.json", 0.5); }
// Keras 3 writes no gain for Identity: 1, as Keras reloads it.
TEST(MatrixInitializersAcceptance, Keras3FileTrains) { expectKerasFileTrains("matrix_initializers_keras3.json", 1.0); }

}  // namespace
}  // namespace ipusim::testing::matrix_initializers_keras_test
