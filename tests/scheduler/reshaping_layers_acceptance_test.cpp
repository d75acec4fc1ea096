// Acceptance of the layers that only move elements (issue "Every model
// users bring (1)"): UpSampling1D and UpSampling2D (Keras's repeat, its
// gradient the sum over each repeated block) and Permute (its gradient the
// inverse permutation), trained 20 steps in the
// SystemC model from the CPU reference's initial weights and batches: the
// same losses within 1e-4 relative and the same weights after the last
// step, from ipusim's workload format and from Keras files; in float16 and
// mixed_float16 they track the float32 reference within 1% (as the other
// half acceptance tests). One simulation per test (per process).
#include "training_harness.hpp"

#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

namespace ipusim::testing::reshaping_layers_acceptance_test {
namespace {

constexpr std::uint64_t kSteps = 20;

const nlohmann::json kMomentum = {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}};
// A gentle step for the half runs: with momentum the U-Net's losses jump
// (a chaotic path amplifies half's rounding far beyond 1% within 20 steps).
const nlohmann::json kPlainSgd = {{"type", "sgd"}, {"learning_rate", 0.02}};

nlohmann::json job(const char* layers, const nlohmann::json& inputShape, const nlohmann::json& optimizer = kMomentum) {
  return smallJob(layers, inputShape, optimizer, 11);
}

void expectSame(const nlohmann::json& j) { expectSameTraining(j, "reshaping.json", kSteps); }
void expectHalfTracksFloat(const nlohmann::json& j, const std::string& dtype) {
  expectHalfTracksFloat32(j, dtype, "reshaping.json", kSteps);
}

// A U-Net-style decoder: a strided convolution, UpSampling2D back (Keras's
// default 2x2) concatenated with the skip, then an uneven UpSampling2D
// ([2, 3]) before a strided convolution: each element's gradient is the sum
// over its block.
constexpr const char* kUpSampling2D = R"([
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu", "name": "skip"},
  {"type": "conv2d", "filters": 6, "kernel_size": 3, "strides": 2, "padding": "same", "activation": "relu"},
  {"type": "up_sampling2d", "name": "up"},
  {"type": "concatenate", "inputs": ["skip", "up"]},
  {"type": "conv2d", "filters": 3, "kernel_size": 3, "strides": 2, "activation": "tanh"},
  {"type": "up_sampling2d", "size": [2, 3], "interpolation": "nearest"},
  {"type": "conv2d", "filters": 4, "kernel_size": 3, "strides": 2},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ReshapingLayersAcceptance, UpSampling2D) { expectSame(job(kUpSampling2D, {8, 8, 2})); }

// UpSampling1D over a sequence: its default size 2 after a dense layer on
// each step, then size 3 before a strided Conv1D.
constexpr const char* kUpSampling1D = R"([
  {"type": "dense", "units": 5, "activation": "tanh"},
  {"type": "up_sampling1d"},
  {"type": "conv1d", "filters": 4, "kernel_size": 3, "strides": 2, "activation": "relu"},
  {"type": "up_sampling1d", "size": 3},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ReshapingLayersAcceptance, UpSampling1D) { expectSame(job(kUpSampling1D, {6, 3})); }

TEST(ReshapingLayersAcceptance, UpSampling2DInFloat16) {
  expectHalfTracksFloat(job(kUpSampling2D, {8, 8, 2}, kPlainSgd), "float16");
}
TEST(ReshapingLayersAcceptance, UpSampling2DInMixedFloat16) {
  expectHalfTracksFloat(job(kUpSampling2D, {8, 8, 2}, kPlainSgd), "mixed_float16");
}
TEST(ReshapingLayersAcceptance, UpSampling1DInFloat16) {
  expectHalfTracksFloat(job(kUpSampling1D, {6, 3}, kPlainSgd), "float16");
}

// Permute: the image's rows and columns swapped, then its channels made the
// first axis (a layer reads them as rows); the sequence's steps and features
// swapped on the model's input (no gradient) and after a dense layer on
// each step.
constexpr const char* kPermuteImage = R"([
  {"type": "conv2d", "filters": 4, "kernel_size": [3, 2], "activation": "relu"},
  {"type": "permute", "dims": [2, 1, 3], "name": "transposed"},
  {"type": "conv2d", "filters": 5, "kernel_size": [2, 3], "strides": [1, 2], "activation": "tanh"},
  {"type": "permute", "dims": [3, 1, 2], "name": "channels_first"},
  {"type": "dense", "units": 3, "activation": "relu"},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";
constexpr const char* kPermuteSequence = R"([
  {"type": "permute", "dims": [2, 1]},
  {"type": "dense", "units": 6, "activation": "tanh"},
  {"type": "permute", "dims": [2, 1]},
  {"type": "conv1d", "filters": 4, "kernel_size": 3, "activation": "relu"},
  {"type": "flatten"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(ReshapingLayersAcceptance, PermuteImage) { expectSame(job(kPermuteImage, {7, 9, 2})); }
TEST(ReshapingLayersAcceptance, PermuteSequence) { expectSame(job(kPermuteSequence, {5, 8})); }
TEST(ReshapingLayersAcceptance, PermuteImageInFloat16) {
  expectHalfTracksFloat(job(kPermuteImage, {7, 9, 2}, kPlainSgd), "float16");
}
TEST(ReshapingLayersAcceptance, PermuteSequenceInMixedFloat16) {
  expectHalfTracksFloat(job(kPermuteSequence, {5, 8}, kPlainSgd), "mixed_float16");
}

// The layers from Keras files (tests/data/keras/make_reshaping_layers.py: a
// U-Net-style decoder step, an uneven UpSampling2D, Permute of an image and
// of a sequence, UpSampling1D over a sequence), in either format.
void expectKerasFileTrains(const char* file) {
  nlohmann::json j = job("[]", {8, 8, 2});
  j["model"] = {{"keras", sourcePath(std::string("tests/data/keras/") + file)}};
  expectSame(j);
}
TEST(ReshapingLayersAcceptance, KerasTf2File) { expectKerasFileTrains("reshaping_layers_tf2.json"); }
TEST(ReshapingLayersAcceptance, Keras3File) { expectKerasFileTrains("reshaping_layers_keras3.json"); }

}  // namespace
}  // namespace ipusim::testing::reshaping_layers_acceptance_test
