// Acceptance of the convolution family (issue "Every model users bring (1)"):
// Conv1D (causal, dilated, grouped, strided), Conv2D with dilation_rate and
// groups, DepthwiseConv1D/2D (depth_multiplier), SeparableConv1D/2D and
// Conv1D/2DTranspose (strides, padding, output_padding, dilation_rate),
// trained 20 steps in the SystemC model from the CPU reference's initial
// weights and batches: the same losses within 1e-4 relative, and the same
// weights after the last step; in float16 and mixed_float16 they track the
// float32 reference within 1% (as the other half acceptance tests). One
// simulation per test (per process).
#include "training_harness.hpp"

#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace ipusim::testing::conv_family_acceptance_test {
namespace {

constexpr std::uint64_t kSteps = 20;

nlohmann::json job(const char* layers, const nlohmann::json& inputShape, const nlohmann::json& optimizer) {
  return smallJob(layers, inputShape, optimizer, 5);
}

// The losses, and the trained weights after the last step, as the reference's.
void expectSame(const nlohmann::json& j) { expectSameTraining(j, "conv_family.json", kSteps); }
// In half: within 1% of the float32 reference, and some rounding happens.
void expectHalfTracksFloat(const nlohmann::json& j, const std::string& dtype) {
  expectHalfTracksFloat32(j, dtype, "conv_family.json", kSteps);
}

const nlohmann::json kSgd = {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}};
const nlohmann::json kAdam = {{"type", "adam"}, {"learning_rate", 0.01}};
// A gentle step where momentum makes the 1-D net's losses jump (a chaotic
// path amplifies half's rounding far beyond 1% within 20 steps).
const nlohmann::json kPlainSgd = {{"type", "sgd"}, {"learning_rate", 0.02}};

// Conv2D with dilation_rate (same and valid padding) and with groups
// (2 channels per group, strided), then a grouped Conv2D of 4 channels per group.
constexpr const char* kDilatedGroupedConv2D = R"([
  {"type": "conv2d", "filters": 8, "kernel_size": 3, "dilation_rate": 2, "padding": "same", "activation": "relu"},
  {"type": "conv2d", "filters": 8, "kernel_size": 3, "groups": 4, "strides": 2, "padding": "same", "activation": "tanh"},
  {"type": "conv2d", "filters": 6, "kernel_size": [2, 3], "groups": 2, "dilation_rate": [1, 2], "use_bias": false},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ConvFamilyAcceptance, Conv2DDilatedAndGrouped) { expectSame(job(kDilatedGroupedConv2D, {10, 10, 2}, kSgd)); }

// DepthwiseConv2D: depth_multiplier 2 with same padding, then strided and
// valid without bias, dilated.
constexpr const char* kDepthwise = R"([
  {"type": "conv2d", "filters": 6, "kernel_size": 3, "padding": "same", "activation": "relu"},
  {"type": "depthwise_conv2d", "kernel_size": 3, "depth_multiplier": 2, "padding": "same", "activation": "relu"},
  {"type": "depthwise_conv2d", "kernel_size": [3, 2], "strides": 2, "use_bias": false},
  {"type": "depthwise_conv2d", "kernel_size": 2, "dilation_rate": 2, "activation": "tanh"},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ConvFamilyAcceptance, DepthwiseConv2D) { expectSame(job(kDepthwise, {10, 10, 2}, kSgd)); }

// A MobileNet-style depthwise-separable block (depthwise, batch
// normalization, relu, pointwise 1x1 Conv2D) and SeparableConv2D, with a
// residual add.
constexpr const char* kSeparable = R"([
  {"type": "conv2d", "filters": 8, "kernel_size": 3, "strides": 2, "padding": "same", "name": "stem"},
  {"type": "depthwise_conv2d", "kernel_size": 3, "padding": "same", "use_bias": false, "name": "dw"},
  {"type": "batch_normalization", "name": "dw_bn"},
  {"type": "activation", "activation": "relu", "name": "dw_relu"},
  {"type": "conv2d", "filters": 8, "kernel_size": 1, "name": "pw"},
  {"type": "add", "inputs": ["stem", "pw"], "name": "skip"},
  {"type": "separable_conv2d", "filters": 12, "kernel_size": 3, "depth_multiplier": 2, "padding": "same",
   "activation": "relu", "name": "sep"},
  {"type": "separable_conv2d", "filters": 6, "kernel_size": 2, "dilation_rate": 2, "use_bias": false, "name": "sep2"},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ConvFamilyAcceptance, DepthwiseSeparableBlockAndSeparableConv2D) { expectSame(job(kSeparable, {10, 10, 3}, kAdam)); }

// Conv2DTranspose: strided same (upsampling back), valid with
// output_padding, dilated.
constexpr const char* kTranspose = R"([
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "strides": 2, "padding": "same", "activation": "relu"},
  {"type": "conv2d_transpose", "filters": 6, "kernel_size": 3, "strides": 2, "padding": "same", "activation": "relu"},
  {"type": "conv2d_transpose", "filters": 3, "kernel_size": 2, "strides": 2, "output_padding": 1},
  {"type": "conv2d_transpose", "filters": 2, "kernel_size": [2, 3], "dilation_rate": 2, "use_bias": false,
   "activation": "tanh"},
  {"type": "conv2d", "filters": 4, "kernel_size": 5, "strides": 5},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ConvFamilyAcceptance, Conv2DTranspose) { expectSame(job(kTranspose, {10, 10, 2}, kSgd)); }

// A residual 1-D convnet: causal Conv1D with growing dilation (a WaveNet /
// TCN stack), a grouped one, a strided same one.
constexpr const char* kResidualConv1D = R"([
  {"type": "conv1d", "filters": 8, "kernel_size": 3, "padding": "causal", "activation": "relu", "name": "c0"},
  {"type": "conv1d", "filters": 8, "kernel_size": 3, "padding": "causal", "dilation_rate": 2, "activation": "relu", "name": "c1"},
  {"type": "conv1d", "filters": 8, "kernel_size": 3, "padding": "causal", "dilation_rate": 4, "groups": 2, "name": "c2"},
  {"type": "add", "inputs": ["c0", "c2"], "name": "skip"},
  {"type": "conv1d", "filters": 6, "kernel_size": 2, "strides": 2, "padding": "same", "activation": "tanh"},
  {"type": "conv1d", "filters": 4, "kernel_size": 3},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ConvFamilyAcceptance, ResidualCausalDilatedConv1D) { expectSame(job(kResidualConv1D, {16, 3}, kAdam)); }

// DepthwiseConv1D, SeparableConv1D and Conv1DTranspose.
constexpr const char* kOneD = R"([
  {"type": "depthwise_conv1d", "kernel_size": 3, "depth_multiplier": 2, "padding": "same", "activation": "relu"},
  {"type": "separable_conv1d", "filters": 6, "kernel_size": 3, "dilation_rate": 2, "activation": "relu"},
  {"type": "conv1d_transpose", "filters": 4, "kernel_size": 3, "strides": 2, "padding": "same"},
  {"type": "conv1d_transpose", "filters": 2, "kernel_size": 2, "strides": 2, "output_padding": 1, "use_bias": false},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ConvFamilyAcceptance, DepthwiseSeparableAndTransposedConv1D) { expectSame(job(kOneD, {12, 3}, kSgd)); }

// The family from Keras files (tests/data/keras/make_conv_family.py: a
// depthwise-separable block, SeparableConv2D, a dilated grouped Conv2D,
// Conv2DTranspose, and a 1-D branch of Conv1D causal dilated,
// DepthwiseConv1D, SeparableConv1D and Conv1DTranspose), in either format.
void expectKerasFileTrains(const char* file) {
  nlohmann::json j = job("[]", {8, 8, 3}, kSgd);
  j["model"] = {{"keras", sourcePath(std::string("tests/data/keras/") + file)}};
  expectSame(j);
}
TEST(ConvFamilyAcceptance, KerasTf2ConvFamily) { expectKerasFileTrains("conv_family_tf2.json"); }
TEST(ConvFamilyAcceptance, Keras3ConvFamily) { expectKerasFileTrains("conv_family_keras3.json"); }

// Half precision: the depthwise-separable block, the transposed and the 1-D nets.
// (Adam's squared gradients underflow in float16 variables: SGD there.)
TEST(ConvFamilyAcceptance, DepthwiseSeparableInFloat16) { expectHalfTracksFloat(job(kSeparable, {10, 10, 3}, kSgd), "float16"); }
TEST(ConvFamilyAcceptance, DepthwiseSeparableInMixedFloat16) {
  expectHalfTracksFloat(job(kSeparable, {10, 10, 3}, kAdam), "mixed_float16");
}
TEST(ConvFamilyAcceptance, DilatedGroupedConv2DInFloat16) {
  expectHalfTracksFloat(job(kDilatedGroupedConv2D, {10, 10, 2}, kSgd), "float16");
}
TEST(ConvFamilyAcceptance, Conv2DTransposeInMixedFloat16) {
  expectHalfTracksFloat(job(kTranspose, {10, 10, 2}, kSgd), "mixed_float16");
}
TEST(ConvFamilyAcceptance, ResidualCausalConv1DInFloat16) {
  expectHalfTracksFloat(job(kResidualConv1D, {16, 3}, kPlainSgd), "float16");
}
TEST(ConvFamilyAcceptance, OneDimensionalFamilyInMixedFloat16) {
  expectHalfTracksFloat(job(kOneD, {12, 3}, kSgd), "mixed_float16");
}

}  // namespace
}  // namespace ipusim::testing::conv_family_acceptance_test
