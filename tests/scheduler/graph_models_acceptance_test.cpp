// Acceptance of models that are graphs, not chains (issue "Every model users
// bring (1)"): residual connections, branches merged by add, subtract,
// multiply and concatenate, global pooling, a value read by several layers.
// Each, compiled and run in the SystemC model, computes the same losses as
// the CPU reference over 20 steps (relative 1e-4) from the same initial
// weights and batches; half variants track the float32 reference within 1%.
// One simulation per test (per process).
#include "training_harness.hpp"

#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace ipusim::testing::graph_models_acceptance_test {
namespace {

constexpr std::uint64_t kSteps = 20;

nlohmann::json job(const char* layers, const nlohmann::json& inputShape = nullptr) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 7, "features": 64, "classes": 10, "examples": 64},
    "training": {"steps": 20, "steps_per_execution": 4},
    "optimizer": {"type": "sgd", "learning_rate": 0.05, "momentum": 0.9},
    "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 3})");
  j["model"]["layers"] = nlohmann::json::parse(layers);
  if (!inputShape.is_null()) j["dataset"]["input_shape"] = inputShape;
  return j;
}

TrainingLosses run(const nlohmann::json& j, std::uint64_t steps = kSteps) {
  return runTraining(scheduler::parseWorkload(j, "graph.json"), steps);
}

// Two residual blocks: x + f(x), the second skipping over a dropout-free pair.
constexpr const char* kResidualMlp = R"([
  {"type": "dense", "units": 32, "activation": "relu", "name": "stem"},
  {"type": "dense", "units": 32, "activation": "relu", "name": "f1"},
  {"type": "dense", "units": 32, "name": "f2"},
  {"type": "add", "inputs": ["stem", "f2"], "name": "skip1"},
  {"type": "activation", "activation": "relu", "name": "relu1"},
  {"type": "dense", "units": 32, "activation": "tanh", "name": "g1"},
  {"type": "add", "inputs": ["relu1", "g1"], "name": "skip2"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(GraphModelsAcceptance, ResidualMlp) { expectSameLosses(run(job(kResidualMlp)), kSteps); }

// Branches from one value merged every way: subtract, multiply, concatenate
// (features axis) and an add of three inputs; the stem is read by four layers.
TEST(GraphModelsAcceptance, BranchesMergedEveryWay) {
  expectSameLosses(run(job(R"([
    {"type": "dense", "units": 24, "activation": "relu", "name": "stem"},
    {"type": "dense", "units": 24, "activation": "sigmoid", "name": "a"},
    {"type": "dense", "units": 24, "activation": "tanh", "name": "b"},
    {"type": "subtract", "inputs": ["a", "b"], "name": "diff"},
    {"type": "multiply", "inputs": ["a", "stem"], "name": "gate"},
    {"type": "add", "inputs": ["diff", "gate", "stem"], "name": "sum3"},
    {"type": "concatenate", "inputs": ["sum3", "b", "stem"], "name": "cat"},
    {"type": "dense", "units": 10, "activation": "softmax"}])")),
                   kSteps);
}

// The elementwise maximum, minimum and average of three branches (Keras's
// Maximum, Minimum, Average): the extremes' gradient reaches, element by
// element, the branch that won; the average's a third of it each branch.
constexpr const char* kExtremesAndAverage = R"([
    {"type": "dense", "units": 24, "activation": "relu", "name": "stem"},
    {"type": "dense", "units": 24, "name": "a", "inputs": ["stem"]},
    {"type": "dense", "units": 24, "activation": "tanh", "name": "b", "inputs": ["stem"]},
    {"type": "dense", "units": 24, "activation": "sigmoid", "name": "c", "inputs": ["stem"]},
    {"type": "maximum", "inputs": ["a", "b", "c"], "name": "most"},
    {"type": "minimum", "inputs": ["a", "c"], "name": "least"},
    {"type": "average", "inputs": ["a", "b", "c"], "name": "mean"},
    {"type": "concatenate", "inputs": ["most", "least", "mean"]},
    {"type": "dense", "units": 10, "activation": "softmax"}])";
TEST(GraphModelsAcceptance, MaximumMinimumAndAverageOfThreeBranches) {
  expectSameLosses(run(job(kExtremesAndAverage)), kSteps);
}

// 1-D pooling over the steps of a sequence (Keras's MaxPooling1D,
// AveragePooling1D, GlobalAveragePooling1D, GlobalMaxPooling1D with
// keepdims): 16 steps of 4 channels, a dense layer on each step.
TEST(GraphModelsAcceptance, OneDimensionalPooling) {
  expectSameLosses(run(job(R"([
    {"type": "reshape", "target_shape": [16, 4]},
    {"type": "dense", "units": 6, "activation": "tanh", "name": "per_step"},
    {"type": "max_pooling1d", "pool_size": 2, "name": "max"},
    {"type": "average_pooling1d", "pool_size": 3, "strides": 2, "padding": "same", "name": "avg", "inputs": ["per_step"]},
    {"type": "global_average_pooling1d", "name": "gap", "inputs": ["max"]},
    {"type": "global_max_pooling1d", "keepdims": true, "name": "gmp", "inputs": ["avg"]},
    {"type": "flatten", "name": "gmp_flat"},
    {"type": "concatenate", "inputs": ["gap", "gmp_flat"]},
    {"type": "dense", "units": 10, "activation": "softmax"}])")),
                   kSteps);
}

// A value added to itself: its gradient is the sum of both reads.
TEST(GraphModelsAcceptance, ValueReadTwiceByOneMerge) {
  expectSameLosses(run(job(R"([
    {"type": "dense", "units": 16, "activation": "relu", "name": "h"},
    {"type": "add", "inputs": ["h", "h"]},
    {"type": "dense", "units": 10, "activation": "softmax"}])")),
                   kSteps);
}

// A residual convnet: convolution blocks with identity and projection
// shortcuts, batch normalization, channel concatenation, global average and
// max pooling.
constexpr const char* kResidualConvNet = R"([
  {"type": "conv2d", "filters": 8, "kernel_size": 3, "padding": "same", "name": "stem"},
  {"type": "batch_normalization", "name": "stem_bn"},
  {"type": "activation", "activation": "relu", "name": "stem_relu"},
  {"type": "conv2d", "filters": 8, "kernel_size": 3, "padding": "same", "activation": "relu", "name": "c1"},
  {"type": "conv2d", "filters": 8, "kernel_size": 3, "padding": "same", "name": "c2"},
  {"type": "add", "inputs": ["stem_relu", "c2"], "name": "block1"},
  {"type": "activation", "activation": "relu", "name": "block1_relu"},
  {"type": "conv2d", "filters": 8, "kernel_size": 3, "strides": 2, "padding": "same", "activation": "relu", "name": "d1"},
  {"type": "conv2d", "filters": 8, "kernel_size": 1, "strides": 2, "name": "proj", "inputs": ["block1_relu"]},
  {"type": "add", "inputs": ["d1", "proj"], "name": "block2"},
  {"type": "concatenate", "inputs": ["block2", "d1"], "name": "cat"},
  {"type": "global_average_pooling2d", "name": "gap", "inputs": ["cat"]},
  {"type": "global_max_pooling2d", "name": "gmp", "inputs": ["cat"]},
  {"type": "concatenate", "inputs": ["gap", "gmp"], "name": "pooled"},
  {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(GraphModelsAcceptance, ResidualConvNet) {
  expectSameLosses(run(job(kResidualConvNet, {8, 8, 1})), kSteps);
}

// Concatenation along the rows of an image (axis 1) and a kept global pool.
TEST(GraphModelsAcceptance, ConcatenateOnAnInnerAxis) {
  expectSameLosses(run(job(R"([
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu", "name": "a"},
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu", "name": "b", "inputs": ["input"]},
    {"type": "concatenate", "axis": 1, "inputs": ["a", "b"], "name": "rows"},
    {"type": "conv2d", "filters": 6, "kernel_size": 3, "name": "c"},
    {"type": "global_average_pooling2d", "keepdims": true},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])",
                           {8, 8, 1})),
                   kSteps);
}

// ResNet's stem: zero padding before a valid 7x7-style convolution and
// before max pooling; cropping; and 1-D padding and cropping of a sequence
// (steps x channels) read by a dense layer after a flatten.
TEST(GraphModelsAcceptance, ZeroPaddingAndCropping) {
  expectSameLosses(run(job(R"([
    {"type": "zero_padding2d", "padding": [[2, 1], [0, 3]]},
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "strides": 2, "activation": "relu"},
    {"type": "zero_padding2d"},
    {"type": "max_pooling2d", "pool_size": 3, "strides": 2},
    {"type": "cropping2d", "cropping": [[0, 1], [1, 0]], "name": "crop"},
    {"type": "conv2d", "filters": 4, "kernel_size": 1, "name": "c2", "inputs": ["crop"]},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])",
                           {8, 8, 1})),
                   kSteps);
}

TEST(GraphModelsAcceptance, OneDimensionalPaddingAndCropping) {
  expectSameLosses(run(job(R"([
    {"type": "dense", "units": 12, "activation": "relu", "name": "h"},
    {"type": "reshape", "target_shape": [4, 3]},
    {"type": "zero_padding1d", "padding": [1, 2]},
    {"type": "cropping1d", "cropping": [2, 0]},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])")),
                   kSteps);
}

// Keras's Dense on the last axis of a sequence (every step a row of the
// product), and a dense layer's output reshaped into an image for a
// convolution.
TEST(GraphModelsAcceptance, DenseOnASequenceAndConvAfterDense) {
  expectSameLosses(run(job(R"([
    {"type": "reshape", "target_shape": [8, 8]},
    {"type": "dense", "units": 6, "activation": "tanh"},
    {"type": "flatten"},
    {"type": "dense", "units": 36, "activation": "relu"},
    {"type": "reshape", "target_shape": [6, 6, 1]},
    {"type": "conv2d", "filters": 3, "kernel_size": 3},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])")),
                   kSteps);
}

// The residual convnet in half precision tracks the float32 reference as the
// chains do (precision_test.cpp): within 1%, and some rounding happens.
void expectHalfTracksFloat(const std::string& dtype, const char* layers = kResidualConvNet,
                           const nlohmann::json& shape = {8, 8, 1}) {
  auto j = job(layers, shape);
  j["model"]["dtype"] = dtype;
  expectHalfTracksFloat32(run(j), kSteps, dtype);
}

TEST(GraphModelsAcceptance, ResidualConvNetInFloat16) { expectHalfTracksFloat("float16"); }
TEST(GraphModelsAcceptance, MaximumMinimumAndAverageInFloat16) {
  expectHalfTracksFloat("float16", kExtremesAndAverage, nullptr);
}
TEST(GraphModelsAcceptance, ResidualMlpInMixedFloat16) {
  auto j = job(kResidualMlp);
  j["model"]["dtype"] = "mixed_float16";
  expectHalfTracksFloat32(run(j), kSteps, "mixed_float16");
}

// The same kind of network from a Keras functional file, in either format.
void expectKerasResidualConvnet(const char* file) {
  nlohmann::json j = job("[]", {8, 8, 1});
  j["model"] = {{"keras", sourcePath(std::string("tests/data/keras/") + file)}};
  expectSameLosses(run(j), kSteps);
}

TEST(GraphModelsAcceptance, KerasTf2ResidualConvnet) { expectKerasResidualConvnet("residual_convnet_tf2.json"); }
TEST(GraphModelsAcceptance, Keras3ResidualConvnet) { expectKerasResidualConvnet("residual_convnet_keras3.json"); }

// A nested Sequential, a convolution called twice and TF op nodes (x + y,
// tf.math.multiply), from a Keras file in either format.
TEST(GraphModelsAcceptance, KerasTf2NestedSharedAndTfOps) { expectKerasResidualConvnet("graph_features_tf2.json"); }
TEST(GraphModelsAcceptance, Keras3NestedSharedAndOps) { expectKerasResidualConvnet("graph_features_keras3.json"); }

// A dense layer called twice in a row (its second call reads its first),
// both calls merged: one kernel, the sum of both calls' gradients.
TEST(GraphModelsAcceptance, SharedDenseCalledTwice) {
  expectSameLosses(run(job(R"([
    {"type": "dense", "units": 16, "activation": "relu", "name": "stem"},
    {"type": "dense", "units": 16, "activation": "tanh", "name": "shared"},
    {"shares": "shared", "name": "shared_again", "inputs": ["shared"]},
    {"type": "add", "inputs": ["shared", "shared_again"]},
    {"type": "dense", "units": 10, "activation": "softmax"}])")),
                   kSteps);
}

// A convolution and a batch normalization shared by two branches (a
// Siamese pair over one image): the kernel, gamma and beta get both
// branches' gradients, the moving statistics are updated by both calls in turn.
TEST(GraphModelsAcceptance, SharedConvAndBatchNormOverTwoBranches) {
  expectSameLosses(run(job(R"([
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu", "name": "stem"},
    {"type": "max_pooling2d", "pool_size": 2, "strides": 1, "padding": "same", "name": "pooled"},
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "same", "name": "twin", "inputs": ["stem"]},
    {"shares": "twin", "name": "twin_b", "inputs": ["pooled"]},
    {"type": "batch_normalization", "name": "twin_bn", "inputs": ["twin"]},
    {"shares": "twin_bn", "name": "twin_bn_b", "inputs": ["twin_b"]},
    {"type": "subtract", "inputs": ["twin_bn", "twin_bn_b"]},
    {"type": "global_average_pooling2d"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {8, 8, 1})),
                   kSteps);
}

}  // namespace
}  // namespace ipusim::testing::graph_models_acceptance_test
