// A masked loss (issue "Every model users bring (2)": sequence losses,
// masked): an output that carries an Embedding's mask_zero mask is weighed
// as Keras's Loss.__call__ weighs it (apply_mask: row r gets m_r total /
// (valid + epsilon), so the mean is sum(loss m) / valid), its gradient
// weighted the same; the CPU reference weighs its rows the same way, and
// every model trains as the reference over 20 steps. What is not modelled
// (another loss, several outputs, a mask over other steps than the labels')
// is refused naming the output layer.
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

namespace ipusim::testing::masked_loss_test {
namespace {

constexpr std::uint64_t kSteps = 20;
const nlohmann::json kAdam = {{"type", "adam"}, {"learning_rate", 0.01}};
const nlohmann::json kSgd = {{"type", "sgd"}, {"learning_rate", 0.1}, {"momentum", 0.9}};

// A tagger: a class per step of padded token ids (a vocabulary of 3: a third
// of the steps are padding), an LSTM's sequence carrying the mask to the
// output.
const char* kTagger = R"([
    {"type": "embedding", "input_dim": 3, "output_dim": 6, "mask_zero": true, "name": "tokens"},
    {"type": "lstm", "units": 5, "return_sequences": true, "name": "lstm"},
    {"type": "dense", "units": 4, "activation": "softmax", "name": "tags"}])";

nlohmann::json tagger(const nlohmann::json& optimizer, std::uint64_t seed) {
  nlohmann::json j = smallJob(kTagger, {7}, optimizer, seed);
  j["dataset"]["classes"] = 4;
  return j;
}

TEST(MaskedLoss, ATaggerOverPaddedTokensTrainsAsTheReference) {
  expectSameTraining(tagger(kAdam, 31), "masked_tagger.json", kSteps);
}

// A causal language model over padded tokens: the attention under the
// padding and causal masks, its output carrying the query's mask to the loss.
TEST(MaskedLoss, ACausalLanguageModelOverPaddedTokensTrainsAsTheReference) {
  nlohmann::json j = smallJob(R"([
    {"type": "embedding", "input_dim": 4, "output_dim": 8, "mask_zero": true, "name": "tokens"},
    {"type": "multi_head_attention", "num_heads": 2, "key_dim": 4, "use_causal_mask": true, "inputs": ["tokens", "tokens"],
     "name": "attention"},
    {"type": "add", "inputs": ["tokens", "attention"], "name": "residual"},
    {"type": "layer_normalization", "name": "norm"},
    {"type": "dense", "units": 4, "activation": "softmax", "name": "next_token"}])", {6}, kSgd, 32);
  j["dataset"]["classes"] = 4;
  expectSameTraining(j, "masked_lm.json", kSteps);
}

TEST(MaskedLoss, MixedPrecisionTracksFloat32) {
  expectHalfTracksFloat32(tagger(kSgd, 33), "mixed_float16", "masked_tagger.json", kSteps);
}

// The weights are one IdMaskLossWeights vertex and the gradient the weighted
// loss gradient; without mask_zero neither is there.
TEST(MaskedLoss, TheRowsAreWeighedByOneVertexAndTheGradientByTheWeightedTransform) {
  auto codelets = [](const nlohmann::json& j) {
    const scheduler::CompiledWorkload c = scheduler::compile(scheduler::parseWorkload(j, "w.json"));
    std::map<std::string, std::size_t> n;
    for (const ir::ComputeSet& cs : c.exe.computeSets)
      for (const ir::Vertex& v : cs.vertices) ++n[v.codelet];
    return n;
  };
  nlohmann::json j = tagger(kSgd, 34);
  auto masked = codelets(j);
  EXPECT_EQ(masked["IdMaskLossWeights"], 1u);
  EXPECT_GT(masked["SoftmaxCrossEntropyGradWeighted"], 0u);
  EXPECT_EQ(masked["SoftmaxCrossEntropyGrad"], 0u);
  j["model"]["layers"][0]["mask_zero"] = false;
  auto plain = codelets(j);
  EXPECT_EQ(plain["IdMaskLossWeights"], 0u);
  EXPECT_EQ(plain["SoftmaxCrossEntropyGradWeighted"], 0u);
  EXPECT_GT(plain["SoftmaxCrossEntropyGrad"], 0u);
}

std::string compileError(const nlohmann::json& j) {
  try {
    scheduler::compile(scheduler::parseWorkload(j, "w.json"));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(MaskedLoss, WhatIsNotModelledIsRefusedNamingTheOutputLayer) {
  nlohmann::json mse = tagger(kSgd, 35);
  mse["loss"] = {{"type", "mean_squared_error"}};
  const std::string e = compileError(mse);
  EXPECT_NE(e.find("'tags'"), std::string::npos) << e;
  EXPECT_NE(e.find("a masked mean_squared_error is not modelled"), std::string::npos) << e;
}

}  // namespace
}  // namespace ipusim::testing::masked_loss_test
