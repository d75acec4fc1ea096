// Keras's EinsumDense: the equations of Keras's MultiHeadAttention and of its
// docstring analysed as Keras analyses them (the kernel's and the bias's
// stored shapes, the output's, the fans), the ones that are not one matrix
// product refused naming why; models of EinsumDense layers (workload and
// Keras files) train as the CPU reference (which reads the equation's letters
// again) over 20 steps within 1e-4.
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/layers/einsum_equation.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

namespace ipusim::testing::einsum_dense_test {
namespace {

using scheduler::EinsumDensePlan;
using scheduler::Shape;

constexpr std::uint64_t kSteps = 20;
const nlohmann::json kAdam = {{"type", "adam"}, {"learning_rate", 0.01}};

EinsumDensePlan plan(const std::string& equation, const char* bias, const Shape& input,
                     const std::vector<std::int64_t>& output) {
  return scheduler::planEinsumDense(equation, bias != nullptr, bias ? bias : "", input, output,
                                    [](const std::string& key, const std::string& what) {
                                      throw std::invalid_argument(key + ": " + what);
                                    });
}

// The refusal of `equation`: its message.
std::string refusal(const std::string& equation, const char* bias, const Shape& input,
                    const std::vector<std::int64_t>& output) {
  try {
    plan(equation, bias, input, output);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << equation << " was accepted";
  return "";
}

TEST(EinsumDenseEquation, MultiHeadAttentionsProjectionsAreOneProductEach) {
  // The query projection: [T, features] . [features, heads, dim].
  const EinsumDensePlan q = plan("abc,cde->abde", "de", {5, 8}, {-1, 2, 4});
  EXPECT_EQ(q.outputShape, (Shape{5, 2, 4}));
  EXPECT_EQ(q.kernelShape, (Shape{8, 2, 4}));
  EXPECT_EQ(q.biasShape, (Shape{2, 4}));
  EXPECT_EQ(q.rows, 5u);
  EXPECT_EQ(q.contracted, 8u);
  EXPECT_EQ(q.produced, 8u);
  // Keras's compute_fans of a rank-3 kernel: its first axis the receptive field.
  EXPECT_EQ(q.fanIn, 16u);
  EXPECT_EQ(q.fanOut, 32u);
  // The output projection: [T, heads, dim] . [heads, dim, units].
  const EinsumDensePlan o = plan("abcd,cde->abe", "e", {5, 2, 4}, {-1, 6});
  EXPECT_EQ(o.outputShape, (Shape{5, 6}));
  EXPECT_EQ(o.kernelShape, (Shape{2, 4, 6}));
  EXPECT_EQ(o.biasShape, (Shape{6}));
  EXPECT_EQ(o.contracted, 8u);
  EXPECT_EQ(o.produced, 6u);
  EXPECT_EQ(o.fanIn, 8u);
  EXPECT_EQ(o.fanOut, 12u);
}

TEST(EinsumDenseEquation, KerasDocstringFormsAndEllipses) {
  const EinsumDensePlan dense = plan("ab,bc->ac", "c", {32}, {64});
  EXPECT_EQ(dense.outputShape, (Shape{64}));
  EXPECT_EQ(dense.kernelShape, (Shape{32, 64}));
  EXPECT_EQ(dense.rows, 1u);
  EXPECT_EQ(dense.fanIn, 32u);
  EXPECT_EQ(dense.fanOut, 64u);
  const EinsumDensePlan sequence = plan("abc,cd->abd", "d", {32, 128}, {-1, 64});
  EXPECT_EQ(sequence.outputShape, (Shape{32, 64}));
  EXPECT_EQ(sequence.rows, 32u);
  // '...' on the left elides the batch and the steps; output_shape names the rest.
  const EinsumDensePlan elided = plan("...x,xy->...y", "y", {32, 128}, {64});
  EXPECT_EQ(elided.outputShape, (Shape{32, 64}));
  EXPECT_EQ(elided.kernelShape, (Shape{128, 64}));
  EXPECT_EQ(elided.rows, 32u);
  // Two contracted axes, no bias.
  const EinsumDensePlan two = plan("abc,bcd->ad", nullptr, {4, 3}, {5});
  EXPECT_EQ(two.outputShape, (Shape{5}));
  EXPECT_EQ(two.kernelShape, (Shape{4, 3, 5}));
  EXPECT_TRUE(two.biasShape.empty());
  EXPECT_EQ(two.contracted, 12u);
}

TEST(EinsumDenseEquation, WhatIsNotOneProductIsRefusedSayingWhy) {
  EXPECT_NE(refusal("abc,dc->abd", nullptr, {5, 8}, {-1, 4}).find("needs a transposition"), std::string::npos);
  EXPECT_NE(refusal("abc,acd->abd", nullptr, {5, 8}, {-1, 4}).find("batched einsum"), std::string::npos);
  EXPECT_NE(refusal("abc,cd->ad", nullptr, {5, 8}, {4}).find("summed without the kernel"), std::string::npos);
  EXPECT_NE(refusal("abc,cde->abde", "d", {5, 8}, {-1, 2, 4}).find("bias_axes: 'd'"), std::string::npos);
  EXPECT_NE(refusal("abc,cde->abde", "q", {5, 8}, {-1, 2, 4}).find("not an axis of the output"), std::string::npos);
  EXPECT_NE(refusal("abc,cd->abd", nullptr, {5, 8}, {4}).find("output_shape: 1 sizes where"), std::string::npos);
  EXPECT_NE(refusal("abc,cd->abd", nullptr, {5, 8}, {-1, -1}).find("output_shape: None"), std::string::npos);
  EXPECT_NE(refusal("abc,cd->abd", nullptr, {5, 8}, {6, 4}).find("output_shape: 6 for the output's axis 'b'"),
            std::string::npos);
  EXPECT_NE(refusal("abc,cd->abd", nullptr, {5, 8, 2}, {-1, 4}).find("an input of rank 4"), std::string::npos);
  EXPECT_NE(refusal("ab->b", nullptr, {5}, {5}).find("is not an EinsumDense equation"), std::string::npos);
  EXPECT_NE(refusal("abc0,cd->abd", nullptr, {5, 8}, {-1, 4}).find("is not an EinsumDense equation"), std::string::npos);
  EXPECT_NE(refusal("aab,bc->ac", nullptr, {5, 8}, {4}).find("a diagonal"), std::string::npos);
  EXPECT_NE(refusal("ab,ac->bc", nullptr, {5}, {4}).find("the batch axis 'a' is contracted"), std::string::npos);
  EXPECT_NE(refusal("ab,bc->ca", nullptr, {5}, {4}).find("the output's first axis 'c' is the batch's"), std::string::npos);
  EXPECT_NE(refusal("abc...,cd->abd...", nullptr, {5, 8, 3}, {-1, 4}).find("elides on the right"), std::string::npos);
}

// Attention's projections, the heads merged back, a residual Add, an elided
// equation without a bias, each with an activation.
const char* kProjections = R"([
    {"type": "einsum_dense", "equation": "abc,cde->abde", "output_shape": [null, 2, 3], "bias_axes": "de",
     "activation": "tanh", "name": "heads"},
    {"type": "einsum_dense", "equation": "abcd,cde->abe", "output_shape": [null, 8], "bias_axes": "e", "name": "merge_heads"},
    {"type": "add", "inputs": ["input", "merge_heads"], "name": "residual"},
    {"type": "einsum_dense", "equation": "...x,xy->...y", "output_shape": 5, "activation": "relu", "name": "features"},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(EinsumDenseAcceptance, ProjectionsTrainAsTheReference) {
  expectSameTraining(smallJob(kProjections, {6, 8}, kAdam, 17), "einsum_dense.json", kSteps);
}

TEST(EinsumDenseAcceptance, MixedPrecisionTracksFloat32) {
  expectHalfTracksFloat32(smallJob(kProjections, {6, 8}, kAdam, 17), "mixed_float16", "einsum_dense.json", kSteps);
}

void expectKerasFileTrains(const std::string& file) {
  nlohmann::json j = smallJob("[]", {6, 8}, kAdam, 5);
  j["model"] = {{"keras", sourcePath("tests/data/keras/" + file)}};
  expectSameTraining(j, file, kSteps);
}
TEST(EinsumDenseAcceptance, KerasTf2File) { expectKerasFileTrains("einsum_dense_tf2.json"); }
TEST(EinsumDenseAcceptance, Keras3File) { expectKerasFileTrains("einsum_dense_keras3.json"); }

// The kernel is stored in Keras's shape (its initializer's fans are Keras's)
// and flattened row-major to the product's [contracted, new].
TEST(EinsumDenseAcceptance, AKerasFilesLayersAreReadWithTheirEquations) {
  const nlohmann::json keras = nlohmann::json::parse(std::ifstream(sourcePath("tests/data/keras/einsum_dense_keras3.json")));
  const scheduler::KerasModel m = scheduler::parseKerasModel(keras, "einsum_dense_keras3.json");
  ASSERT_GE(m.layers.size(), 4u);
  EXPECT_EQ(m.layers[0].kind, "einsum_dense");
  EXPECT_EQ(m.layers[0].equation, "abc,cde->abde");
  EXPECT_EQ(m.layers[0].biasAxes, "de");
  EXPECT_EQ(m.layers[0].einsumOutputShape, (std::vector<std::int64_t>{-1, 2, 3}));
  EXPECT_FALSE(m.layers[3].useBias);  // bias_axes None
}

TEST(EinsumDenseAcceptance, KerasKeysNotModelledAreRefusedNamingTheLayer) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"lora_rank", 4}, {"equation", "abc,dc->abd"}, {"output_shape", "8"}, {"bias_axes", "d"}}) {
    nlohmann::json keras = nlohmann::json::parse(std::ifstream(sourcePath("tests/data/keras/einsum_dense_keras3.json")));
    for (auto& l : keras["config"]["layers"])
      if (l["config"].value("name", "") == "heads") l["config"][key] = value;
    try {
      nlohmann::json j = smallJob("[]", {6, 8}, kAdam, 5);
      const std::string file = ::testing::TempDir() + "einsum_refused.json";
      std::ofstream(file) << keras.dump();
      j["model"] = {{"keras", file}};
      scheduler::compile(scheduler::parseWorkload(j, "w.json"));
      ADD_FAILURE() << key << ": no error";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("heads"), std::string::npos) << key << ": " << what;
      EXPECT_NE(what.find(key), std::string::npos) << key << ": " << what;
    }
  }
}

}  // namespace
}  // namespace ipusim::testing::einsum_dense_test
