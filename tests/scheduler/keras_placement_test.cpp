// model.shards and model.stages: a Keras file's layers placed on IPUs (a
// sharded model) or in pipeline stages, by the first layer of each in the
// file's layer order. A sharded Keras model trains as the CPU reference, a
// pipelined one as gradient accumulation; the bundled BERT-base (a Keras 3
// file with its four shards) reads as its layer list; each misuse is
// refused naming the key, the entry and the name.
#include "same_layers.hpp"
#include "training_harness.hpp"

#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace ipusim::testing::keras_placement_test {
namespace {

constexpr std::uint64_t kSteps = 20;

// A transformer's feed-forward half over [8, 16] (tests/data/keras/
// make_layer_normalization.py): project, norm1, ffn1, ffn2, residual (reads
// norm1 and ffn2), norm2, flatten, output.
nlohmann::json kerasJob(const nlohmann::json& placement) {
  nlohmann::json j = smallJob("[]", {8, 16}, {{"type", "sgd"}, {"learning_rate", 0.05}}, 5);
  j["model"] = {{"keras", sourcePath("tests/data/keras/layer_normalization_keras3.json")}};
  j["model"].update(placement);
  return j;
}

TEST(KerasPlacement, AShardedKerasModelTrainsAsTheReference) {
  nlohmann::json j = kerasJob({{"shards", {"project", "ffn2"}}});
  j["ipu"]["num_ipus"] = 2;
  const scheduler::Workload w = scheduler::parseWorkload(j, "sharded.json");
  std::vector<std::uint32_t> shards;
  for (const scheduler::LayerSpec& l : w.layers) shards.push_back(l.shard);
  EXPECT_EQ(shards, (std::vector<std::uint32_t>{0, 0, 0, 1, 1, 1, 1, 1}));
  expectSameTraining(j, "sharded.json", kSteps);
}

TEST(KerasPlacement, APipelinedKerasModelTrainsAsGradientAccumulation) {
  nlohmann::json j = kerasJob({{"stages", {"project", "ffn2"}}});
  j["ipu"]["num_ipus"] = 2;
  j["pipeline"] = {{"schedule", "grouped"}, {"gradient_accumulation_count", 4}};
  const scheduler::Workload w = scheduler::parseWorkload(j, "pipelined.json");
  EXPECT_EQ(w.pipeline.stages, 2u);
  EXPECT_EQ(*w.layers[2].stage, 0u);  // ffn1
  EXPECT_EQ(*w.layers[3].stage, 1u);  // ffn2
  expectTrainsAsAccumulation(runTraining(w, kSteps), 4, kSteps);
}

std::string refusal(nlohmann::json j) {
  try {
    scheduler::parseWorkload(j, "w.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << j["model"].dump() << " was accepted";
  return "";
}

TEST(KerasPlacement, MisplacedLayersAreRefusedNamingTheEntry) {
  auto expectRefused = [](const nlohmann::json& j, const std::string& words) {
    const std::string what = refusal(j);
    EXPECT_NE(what.find(words), std::string::npos) << what;
  };
  expectRefused(kerasJob({{"shards", {"project", "ffn3"}}}),
                "model.shards[1]: 'ffn3' names no layer of the Keras file (did you mean 'ffn1'?)");
  expectRefused(kerasJob({{"shards", {"norm1", "ffn2"}}}),
                "model.shards[0]: 'norm1': the first shard starts at the model's first layer, 'project'");
  expectRefused(kerasJob({{"shards", {"project", "ffn2", "norm1"}}}),
                "model.shards[2]: 'norm1' comes before or at 'ffn2' in the file's layer order");
  expectRefused(kerasJob({{"shards", {"project"}}, {"stages", {"project", "ffn2"}}}), "not both");
  expectRefused(kerasJob({{"stages", {"project", "ffn2"}}}), "model.stages: needs the workload's \"pipeline\" key");
  nlohmann::json pipelined = kerasJob({{"shards", {"project", "ffn2"}}});
  pipelined["pipeline"] = {{"schedule", "grouped"}, {"gradient_accumulation_count", 4}};
  expectRefused(pipelined, "model.shards: give model.stages and pipeline.device_mapping in a pipelined model");
  nlohmann::json oneStage = kerasJob({{"stages", {"project"}}});
  oneStage["pipeline"] = {{"schedule", "grouped"}, {"gradient_accumulation_count", 4}};
  expectRefused(oneStage, "model.stages: one stage: a pipeline requires at least two");
  nlohmann::json listed = smallJob(R"([{"type": "dense", "units": 10, "activation": "softmax"}])", {8},
                                   {{"type", "sgd"}, {"learning_rate", 0.05}}, 5);
  listed["model"]["shards"] = {"dense"};
  expectRefused(listed, "model.shards: only with model.keras");
}

// BERT-base's layers as ipusim's workload format writes them, on the shards
// of workloads/bert_base_sl128.json: the embeddings and encoder layers 0-2 on
// IPU 0, three encoder layers on each next IPU, the masked-LM head on IPU 3.
nlohmann::json bertLayers() {
  nlohmann::json layers = nlohmann::json::array();
  auto add = [&](nlohmann::json l, std::uint32_t shard) {
    l["shard"] = shard;
    layers.push_back(l);
  };
  add({{"type", "embedding"}, {"input_dim", 30522}, {"output_dim", 768}, {"name", "token_embedding"}}, 0);
  add({{"type", "position_embedding"}, {"sequence_length", 128}, {"name", "position_embedding"}}, 0);
  add({{"type", "add"}, {"inputs", {"token_embedding", "position_embedding"}}, {"name", "embeddings"}}, 0);
  add({{"type", "layer_normalization"}, {"epsilon", 1e-12}, {"name", "embeddings_norm"}}, 0);
  std::string x = "embeddings_norm";
  for (int i = 0; i < 12; ++i) {
    const std::string n = "layer" + std::to_string(i) + "_";
    const std::uint32_t shard = std::uint32_t(i / 3);
    add({{"type", "multi_head_attention"}, {"num_heads", 12}, {"key_dim", 64}, {"inputs", {x, x}}, {"name", n + "attention"}}, shard);
    add({{"type", "add"}, {"inputs", {x, n + "attention"}}, {"name", n + "attention_residual"}}, shard);
    add({{"type", "layer_normalization"}, {"epsilon", 1e-12}, {"name", n + "attention_norm"}}, shard);
    add({{"type", "dense"}, {"units", 3072}, {"activation", "gelu"}, {"name", n + "intermediate"}}, shard);
    add({{"type", "dense"}, {"units", 768}, {"name", n + "output"}}, shard);
    add({{"type", "add"}, {"inputs", {n + "attention_norm", n + "output"}}, {"name", n + "output_residual"}}, shard);
    add({{"type", "layer_normalization"}, {"epsilon", 1e-12}, {"name", n + "output_norm"}}, shard);
    x = n + "output_norm";
  }
  add({{"type", "dense"}, {"units", 768}, {"activation", "gelu"}, {"name", "mlm_transform"}}, 3);
  add({{"type", "layer_normalization"}, {"epsilon", 1e-12}, {"name", "mlm_norm"}}, 3);
  add({{"type", "dense"}, {"units", 30522}, {"activation", "softmax"}, {"name", "mlm_logits"}}, 3);
  return layers;
}

TEST(KerasPlacement, TheBundledBertBaseIsItsLayerListLayerForLayer) {
  const std::string path = sourcePath("workloads/bert_base_sl128.json");
  const scheduler::Workload keras = scheduler::loadWorkload(path);
  nlohmann::json j = nlohmann::json::parse(std::ifstream(path));
  j["model"] = {{"layers", bertLayers()}, {"dtype", "float16"}};
  const scheduler::Workload listed = scheduler::parseWorkload(j, "bert_layers.json");
  EXPECT_EQ(keras.dtype, "float16");
  expectSameLayers(keras, listed);
}

}  // namespace
}  // namespace ipusim::testing::keras_placement_test
