// Acceptance of the activations and activation-like layers (issue "Every
// model users bring (1)"): every Keras activation on dense and conv layers,
// the layers ReLU (max_value, negative_slope, threshold), LeakyReLU, ELU,
// PReLU (its alpha trained), Softmax on any axis and not fused with the
// loss, Rescaling and Normalization, placed where something before them
// trains so their gradients run too. Each model, compiled and run in the
// SystemC model, computes the same losses as the CPU reference
// (cpu_reference_activations.cpp) over 20 steps within 1e-4 relative, from
// the same initial weights and batches, and ends with the same weights
// (PReLU's alpha among them); float16 and mixed_float16 track the float32
// reference within 1%, as issue 10 checked half. One simulation per test.
#include "training_harness.hpp"

#include "model/codelets/per_worker.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace ipusim::testing::activation_layers_acceptance_test {
namespace {

constexpr std::uint64_t kSteps = 20;

nlohmann::json job(const char* layers, const nlohmann::json& inputShape = nullptr, const char* loss = nullptr) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 7, "features": 64, "classes": 10, "examples": 64},
    "training": {"steps": 20, "steps_per_execution": 4},
    "optimizer": {"type": "sgd", "learning_rate": 0.05, "momentum": 0.9},
    "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 3})");
  j["model"]["layers"] = nlohmann::json::parse(layers);
  if (!inputShape.is_null()) j["dataset"]["input_shape"] = inputShape;
  if (loss) j["loss"] = nlohmann::json::parse(loss);
  return j;
}

TrainingLosses run(const nlohmann::json& j) { return runTraining(scheduler::parseWorkload(j, "activations.json"), kSteps); }

// The losses, and the weights after the last step, as the reference's.
void expectSameTraining(const TrainingLosses& r) {
  expectSameLosses(r, kSteps);
  expectSameWeights(r);
}

// Half precision: within 1% of the float32 reference, and rounding happens.
void expectHalfTracksFloat(nlohmann::json j, const std::string& dtype) {
  j["model"]["dtype"] = dtype;
  expectHalfTracksFloat32(run(j), kSteps, dtype);
}

// The codelets the vertices run (a map's PerWorker<C> vertex runs C).
std::set<std::string> codeletsOf(const scheduler::CompiledWorkload& c) {
  std::set<std::string> names;
  for (const auto& cs : c.exe.computeSets)
    for (const auto& v : cs.vertices) names.insert(model::workerCodeletOf(v.codelet.str()));
  return names;
}

// The activations Keras 3 added over relu, sigmoid, tanh and gelu, half of
// them read from the output in their gradient, half from the input.
constexpr const char* kActivationsA = R"([
  {"type": "dense", "units": 16, "activation": "relu6"},
  {"type": "dense", "units": 16, "activation": "elu"},
  {"type": "dense", "units": 16, "activation": "selu"},
  {"type": "dense", "units": 16, "activation": "swish"},
  {"type": "dense", "units": 16, "activation": "gelu_approximate"},
  {"type": "dense", "units": 16, "activation": "leaky_relu"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";
constexpr const char* kActivationsB = R"([
  {"type": "dense", "units": 16, "activation": "softplus"},
  {"type": "dense", "units": 16, "activation": "softsign"},
  {"type": "dense", "units": 16, "activation": "hard_sigmoid"},
  {"type": "dense", "units": 16, "activation": "hard_swish"},
  {"type": "dense", "units": 16, "activation": "mish"},
  {"type": "dense", "units": 16, "activation": "exponential"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ActivationLayersAcceptance, ActivationsOnDenseLayersA) {
  const TrainingLosses r = run(job(kActivationsA));
  expectSameTraining(r);
  const auto names = codeletsOf(r.compiled);
  for (const char* c : {"ClippedRelu", "Elu", "Selu", "Swish", "GeluTanh", "LeakyRelu", "ClippedReluGrad", "EluGrad",
                        "SeluGrad", "SwishGrad", "GeluTanhGrad", "LeakyReluGrad"})
    EXPECT_TRUE(names.count(c)) << c;
}

TEST(ActivationLayersAcceptance, ActivationsOnDenseLayersB) {
  const TrainingLosses r = run(job(kActivationsB));
  expectSameTraining(r);
  const auto names = codeletsOf(r.compiled);
  for (const char* c : {"Softplus", "Softsign", "HardSigmoid", "HardSilu", "Mish", "Exp", "SoftplusGrad", "SoftsignGrad",
                        "HardSigmoidGrad", "HardSiluGrad", "MishGrad", "Mul"})
    EXPECT_TRUE(names.count(c)) << c;
}

TEST(ActivationLayersAcceptance, ActivationsAInFloat16) { expectHalfTracksFloat(job(kActivationsA), "float16"); }
TEST(ActivationLayersAcceptance, ActivationsBInMixedFloat16) { expectHalfTracksFloat(job(kActivationsB), "mixed_float16"); }

// The activation layers between trained layers: ReLU in its four forms
// (plain, clipped, leaky, thresholded with a slope and a clip), LeakyReLU,
// ELU, PReLU (one alpha per unit), a softmax in the middle of the model (an
// activation and a Softmax layer over the first axis of a sequence),
// Rescaling and Normalization (per-unit constants) whose gradients flow back.
constexpr const char* kActivationLayers = R"([
  {"type": "dense", "units": 24, "name": "d1"},
  {"type": "relu", "max_value": 6},
  {"type": "dense", "units": 24, "name": "d2"},
  {"type": "relu", "negative_slope": 0.1, "threshold": 0.05, "max_value": 1.5},
  {"type": "dense", "units": 24, "name": "d3"},
  {"type": "leaky_relu"},
  {"type": "dense", "units": 24, "name": "d4"},
  {"type": "elu", "alpha": 0.5},
  {"type": "dense", "units": 24, "name": "d5"},
  {"type": "prelu", "alpha_initializer": 0.25},
  {"type": "dense", "units": 24, "activation": "softmax", "name": "d6"},
  {"type": "rescaling", "scale": 8, "offset": -0.25},
  {"type": "reshape", "target_shape": [4, 6]},
  {"type": "softmax", "axis": 1},
  {"type": "flatten"},
  {"type": "normalization", "mean": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2,
                                     0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2],
   "variance": [0.5, 1, 2, 4, 0.5, 1, 2, 4, 0.5, 1, 2, 4, 0.5, 1, 2, 4, 0.5, 1, 2, 4, 0.5, 1, 2, 4]},
  {"type": "relu", "negative_slope": 0.2},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ActivationLayersAcceptance, ActivationLayers) {
  const TrainingLosses r = run(job(kActivationLayers));
  expectSameTraining(r);
  const auto names = codeletsOf(r.compiled);
  for (const char* c : {"ClippedRelu", "BoundedLeakyRelu", "LeakyRelu", "Elu", "PRelu", "PReluGrad", "PReluAlphaGrad",
                        "Softmax", "SoftmaxGrad", "ScaleShift", "Normalize"})
    EXPECT_TRUE(names.count(c)) << c;
  EXPECT_TRUE(r.compiled.report.warnings.empty());
}

TEST(ActivationLayersAcceptance, ActivationLayersInFloat16) { expectHalfTracksFloat(job(kActivationLayers), "float16"); }
TEST(ActivationLayersAcceptance, ActivationLayersInMixedFloat16) {
  expectHalfTracksFloat(job(kActivationLayers), "mixed_float16");
}

// A convnet: per-channel input scaling and normalization of the images (no
// gradient: nothing before them trains), an activation on a convolution,
// PReLU sharing alpha over rows and columns (one per channel), a softmax over
// the channels of every position, and a Normalization over the rows axis
// (one mean per row, broadcast over columns and channels).
constexpr const char* kConvNet = R"([
  {"type": "rescaling", "scale": [0.5], "offset": 0.1},
  {"type": "normalization", "axis": -1, "mean": [0.25], "variance": [2.0]},
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "hard_silu"},
  {"type": "prelu", "shared_axes": [1, 2]},
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "activation": "mish"},
  {"type": "softmax", "axis": -1},
  {"type": "normalization", "axis": 1, "mean": [0, 0.1, 0.2, 0.3, 0.4, 0.5], "variance": [1, 2, 3, 4, 5, 6]},
  {"type": "prelu"},
  {"type": "global_average_pooling2d"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ActivationLayersAcceptance, ConvNet) {
  const TrainingLosses r = run(job(kConvNet, {8, 8, 1}));
  expectSameTraining(r);
}

TEST(ActivationLayersAcceptance, ConvNetInFloat16) { expectHalfTracksFloat(job(kConvNet, {8, 8, 1}), "float16"); }

// A softmax ending the model under the squared error is the model's output,
// not the loss's: a Softmax op with its gradient.
TEST(ActivationLayersAcceptance, SoftmaxOutputUnderMeanSquaredError) {
  const TrainingLosses r = run(job(R"([
    {"type": "dense", "units": 16, "activation": "tanh"},
    {"type": "dense", "units": 10, "activation": "softmax"}])",
                                   nullptr, R"({"type": "mean_squared_error"})"));
  expectSameTraining(r);
  EXPECT_TRUE(codeletsOf(r.compiled).count("SoftmaxGrad"));
}

// Without a mean and variance, a Normalization keeps Keras's initial state
// (0 and 1) and the compile says so.
TEST(ActivationLayersAcceptance, NormalizationWithoutStatisticsWarns) {
  const TrainingLosses r = run(job(R"([
    {"type": "normalization"},
    {"type": "dense", "units": 10, "activation": "softmax"}])"));
  expectSameTraining(r);
  ASSERT_EQ(r.compiled.report.warnings.size(), 1u);
  EXPECT_NE(r.compiled.report.warnings[0].find("'normalization'"), std::string::npos) << r.compiled.report.warnings[0];
  EXPECT_NE(r.compiled.report.warnings[0].find("mean 0 and variance 1"), std::string::npos) << r.compiled.report.warnings[0];
}

// The layers as Keras writes them (tests/data/keras/make_activation_layers.py):
// a functional convnet from either format, a TF op scaling a tensor read as
// a Rescaling, the TF 2.x file's hard_sigmoid with Keras 2's slope.
void expectKerasFileTrains(const char* file, double hardSigmoidSlope) {
  nlohmann::json j = job("[]", {8, 8, 1});
  j["model"] = {{"keras", sourcePath(std::string("tests/data/keras/") + file)}};
  const scheduler::Workload w = scheduler::parseWorkload(j, "activations.json");
  bool scaling = false;
  for (const auto& l : w.layers) {
    if (l.name == "conv_b") {
      EXPECT_DOUBLE_EQ(l.activationParams.hardSigmoidSlope, hardSigmoidSlope) << file;
    }
    scaling = scaling || (l.kind == scheduler::layer_kind::kRescaling && l.scaleFactor.values == std::vector<double>{0.5});
  }
  EXPECT_TRUE(scaling) << file << ": the TF op x * 0.5 reads as a Rescaling";
  expectSameTraining(runTraining(w, kSteps));
}

TEST(ActivationLayersAcceptance, KerasTf2File) { expectKerasFileTrains("activation_layers_tf2.json", 0.2); }
TEST(ActivationLayersAcceptance, Keras3File) { expectKerasFileTrains("activation_layers_keras3.json", 1.0 / 6); }

}  // namespace
}  // namespace ipusim::testing::activation_layers_acceptance_test
