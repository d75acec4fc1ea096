// MultiHeadAttention (issue "Every model users bring (2)"): the projections,
// the heads' batched products (BatchMatMul, planned with a group dimension),
// Keras's causal mask, softmax, attention dropout and the output projection,
// trained from the forward ops' own gradients. Each model, compiled and run
// in the SystemC model, computes the same losses as the CPU reference
// (cpu_reference_attention.cpp, written out head by head) over 20 steps
// within 1e-4 relative and ends with the same weights; mixed_float16 tracks
// float32. Keras files read in both formats (TF 2.x passes the value by
// keyword); what is not modelled is refused by key.
#include "same_layers.hpp"
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace ipusim::testing::attention_test {
namespace {

constexpr std::uint64_t kSteps = 20;
const nlohmann::json kSgd = {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}};

// An encoder block: self-attention, a residual, layer normalization.
const char* kEncoderBlock = R"([
    {"type": "dense", "units": 12, "name": "project"},
    {"type": "multi_head_attention", "num_heads": 3, "key_dim": 4, "inputs": ["project", "project"], "name": "attention"},
    {"type": "add", "inputs": ["project", "attention"], "name": "residual"},
    {"type": "layer_normalization", "name": "norm"},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(AttentionAcceptance, SelfAttentionInAnEncoderBlockTrainsAsTheReference) {
  // (SGD: the key bias's gradient is zero but for rounding — softmax ignores a constant per
  // query — and Adam would turn that noise into full steps, in Keras too.)
  expectSameTraining(smallJob(kEncoderBlock, {6, 5}, kSgd, 2), "encoder.json", kSteps);
}

// A query, a value and a separate key of other steps and widths; value_dim,
// output_shape, no biases, and the causal mask (over a square part: 5 query
// steps, 5 value steps).
TEST(AttentionAcceptance, CrossAttentionWithAKeyAndACausalMaskTrainsAsTheReference) {
  expectSameTraining(smallJob(R"([
    {"type": "dense", "units": 8, "name": "query_in"},
    {"type": "dense", "units": 6, "name": "value_in"},
    {"type": "dense", "units": 7, "name": "key_in"},
    {"type": "multi_head_attention", "num_heads": 2, "key_dim": 3, "value_dim": 5, "output_shape": 9, "use_bias": false,
     "use_causal_mask": true, "inputs": ["query_in", "value_in", "key_in"], "name": "attention"},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {5, 4}, kSgd, 3), "cross.json", kSteps);
}

TEST(AttentionAcceptance, AttentionDropoutUsesTheDevicesMasks) {
  expectSameTraining(smallJob(R"([
    {"type": "dense", "units": 8, "name": "project"},
    {"type": "multi_head_attention", "num_heads": 2, "key_dim": 4, "dropout": 0.25, "use_causal_mask": true,
     "inputs": ["project", "project"], "name": "attention"},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {6, 3}, kSgd, 4), "dropout.json", kSteps);
}

TEST(AttentionAcceptance, MixedPrecisionTracksFloat32) {
  expectHalfTracksFloat32(smallJob(kEncoderBlock, {6, 5}, kSgd, 2), "mixed_float16", "encoder.json", kSteps);
}

// A GPT-style decoder block as a language model: token ids, an embedding,
// causal self-attention, a residual and layer normalization, a feed-forward,
// and a softmax over the vocabulary at every step, trained by sparse
// categorical cross-entropy over [batch, steps] targets (a class per step).
const char* kDecoderBlock = R"([
    {"type": "embedding", "input_dim": 24, "output_dim": 8, "name": "tokens"},
    {"type": "multi_head_attention", "num_heads": 2, "key_dim": 4, "use_causal_mask": true, "inputs": ["tokens", "tokens"],
     "name": "attention"},
    {"type": "add", "inputs": ["tokens", "attention"], "name": "residual"},
    {"type": "layer_normalization", "name": "norm"},
    {"type": "dense", "units": 16, "activation": "gelu", "name": "ffn"},
    {"type": "dense", "units": 24, "activation": "softmax", "name": "next_token"}])";

TEST(AttentionAcceptance, ADecoderBlockLearnsEveryStepsTokenAsTheReference) {
  nlohmann::json j = smallJob(kDecoderBlock, {7}, kSgd, 6);
  j["dataset"]["classes"] = 24;
  const scheduler::Workload w = scheduler::parseWorkload(j, "decoder.json");
  EXPECT_EQ(w.dataset.labelSteps, 7u);
  expectSameTraining(j, "decoder.json", kSteps);
}

// A BERT-style encoder as a masked language model: token and position
// embeddings (KerasHub's PositionEmbedding) added and normalized, an
// encoder block, and the vocabulary's scores at every step.
TEST(AttentionAcceptance, ABertStyleEncoderWithPositionsTrainsAsTheReference) {
  nlohmann::json j = smallJob(R"([
    {"type": "embedding", "input_dim": 20, "output_dim": 8, "name": "tokens"},
    {"type": "position_embedding", "sequence_length": 6, "name": "positions"},
    {"type": "add", "inputs": ["tokens", "positions"], "name": "embeddings"},
    {"type": "layer_normalization", "epsilon": 1e-12, "name": "embeddings_norm"},
    {"type": "multi_head_attention", "num_heads": 2, "key_dim": 4, "inputs": ["embeddings_norm", "embeddings_norm"],
     "name": "attention"},
    {"type": "add", "inputs": ["embeddings_norm", "attention"], "name": "residual"},
    {"type": "layer_normalization", "epsilon": 1e-12, "name": "norm"},
    {"type": "dense", "units": 20, "activation": "softmax", "name": "mlm"}])", {6}, kSgd, 8);
  j["dataset"]["classes"] = 20;
  expectSameTraining(j, "encoder.json", kSteps);
}

TEST(AttentionWorkload, PerStepLabelsComeFromSyntheticData) {
  nlohmann::json j = smallJob(R"([
    {"type": "dense", "units": 10, "activation": "softmax"}])", {5, 3}, kSgd, 1);
  EXPECT_EQ(scheduler::parseWorkload(j, "w.json").dataset.labelSteps, 5u);
  j["dataset"]["format"] = "idx";
  try {
    scheduler::parseWorkload(j, "w.json");
    ADD_FAILURE() << "per-step labels from a labels file were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dataset.format"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a class per step"), std::string::npos) << e.what();
  }
}

// A bias over every step of a long sequence (batch x steps rows) has its
// gradient summed where the rows lie first: no owner of the bias gathers
// every row of its columns (an eighth of a tile's memory at most).
TEST(AttentionOps, ASequencesBiasGradientIsSummedWhereItIsHeld) {
  nlohmann::json j = smallJob(R"([
    {"type": "dense", "units": 64, "name": "wide"},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {256, 8}, kSgd, 1);
  const scheduler::Workload w = scheduler::parseWorkload(j, "w.json");
  const scheduler::CompiledWorkload c = scheduler::compile(w);
  bool sawBiasGradient = false;
  for (const ir::Tensor& t : c.exe.tensors) {
    if (t.name.rfind("wide/bias_grad", 0) != 0) continue;
    sawBiasGradient = true;
    std::map<std::uint32_t, std::uint64_t> perTile;
    for (const ir::TileInterval& i : t.mapping) perTile[i.tile] += (i.end - i.begin) * ir::sizeOf(t.dtype);
    for (const auto& [tile, bytes] : perTile) EXPECT_LE(bytes, 638976u / 8) << t.name << " on tile " << tile;
  }
  EXPECT_TRUE(sawBiasGradient);
}

// The heads' products are one BatchMatMul each over batch x heads groups,
// and their plans deal the groups over the tiles.
TEST(AttentionOps, TheHeadsAreBatchedProductsPlannedWithGroups) {
  const scheduler::Workload w = scheduler::parseWorkload(smallJob(kEncoderBlock, {6, 5}, kSgd, 2), "encoder.json");
  const scheduler::CompiledWorkload c = scheduler::compile(w);
  std::size_t grouped = 0;
  for (const scheduler::PlannedMatMul& p : c.report.matMulPlans)
    if (p.op.rfind("attention/scores", 0) == 0 || p.op.rfind("attention/context", 0) == 0) {
      EXPECT_EQ(p.groups, w.dataset.batchSize * 3) << p.op;  // batch x heads
      grouped += 1;
    }
  EXPECT_EQ(grouped, 6u);  // scores, context, and two gradients of each
}

// ---- Keras's masks (an Embedding's mask_zero) into the attention ----

// A padded sentence classifier: ids from a vocabulary of 3 (a third of the
// steps are padding, scattered), self-attention under the query's and the
// value's masks, the residual and normalization carrying the query's mask
// into Keras's masked mean. The reference hides the same keys.
const char* kMaskedEncoder = R"([
    {"type": "embedding", "input_dim": 3, "output_dim": 8, "mask_zero": true, "name": "tokens"},
    {"type": "multi_head_attention", "num_heads": 2, "key_dim": 4, "inputs": ["tokens", "tokens"], "name": "attention"},
    {"type": "add", "inputs": ["tokens", "attention"], "name": "residual"},
    {"type": "layer_normalization", "name": "norm"},
    {"type": "global_average_pooling1d", "name": "mean"},
    {"type": "dense", "units": 10, "activation": "softmax"}])";

TEST(MaskedAttention, PaddedKeysAreHiddenAsTheReferenceHidesThem) {
  expectSameTraining(smallJob(kMaskedEncoder, {7}, kSgd, 21), "masked_encoder.json", kSteps);
}

// The padding masks ANDed with the causal mask (one adder, as Keras merges
// the masks before Softmax adds -1e9 once).
TEST(MaskedAttention, PaddingAndTheCausalMaskAreOneMask) {
  nlohmann::json layers = nlohmann::json::parse(kMaskedEncoder);
  layers[1]["use_causal_mask"] = true;
  expectSameTraining(smallJob(layers.dump().c_str(), {7}, kSgd, 22), "masked_causal.json", kSteps);
}

// A key of its own (a Dense over the tokens, carrying their mask): Keras
// ANDs the value's and the key's masks over the keys.
TEST(MaskedAttention, AKeyCarryingTheMaskHidesTheSameKeys) {
  expectSameTraining(smallJob(R"([
    {"type": "embedding", "input_dim": 3, "output_dim": 6, "mask_zero": true, "name": "tokens"},
    {"type": "dense", "units": 5, "name": "key_in"},
    {"type": "multi_head_attention", "num_heads": 2, "key_dim": 3, "inputs": ["tokens", "tokens", "key_in"], "name": "attention"},
    {"type": "global_average_pooling1d", "name": "mean"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {6}, kSgd, 23), "masked_key.json", kSteps);
}

TEST(MaskedAttention, MixedPrecisionTracksFloat32) {
  expectHalfTracksFloat32(smallJob(kMaskedEncoder, {7}, kSgd, 21), "mixed_float16", "masked_encoder.json", kSteps);
}

// The mask is applied by one IdMaskScores compute set over the scores (and
// none without mask_zero, where nothing changes).
TEST(MaskedAttention, OneMaskedScoresPassInPlaceOfTheCausalConstant) {
  auto count = [](const nlohmann::json& j) {
    const scheduler::CompiledWorkload c = scheduler::compile(scheduler::parseWorkload(j, "w.json"));
    std::size_t masked = 0, causal = 0;
    for (const ir::ComputeSet& cs : c.exe.computeSets)
      for (const ir::Vertex& v : cs.vertices) {
        masked += v.codelet.rfind("IdMaskScores", 0) == 0;
        causal += v.codelet.rfind("AddBias", 0) == 0 && cs.name.find("scores_masked") != std::string::npos;
      }
    return std::make_pair(masked, causal);
  };
  nlohmann::json layers = nlohmann::json::parse(kMaskedEncoder);
  layers[1]["use_causal_mask"] = true;
  const auto withMask = count(smallJob(layers.dump().c_str(), {7}, kSgd, 22));
  EXPECT_GT(withMask.first, 0u);
  EXPECT_EQ(withMask.second, 0u);
  layers[0]["mask_zero"] = false;
  layers[4] = {{"type", "flatten"}};  // (no masked mean without the mask)
  const auto withoutMask = count(smallJob(layers.dump().c_str(), {7}, kSgd, 22));
  EXPECT_EQ(withoutMask.first, 0u);
  EXPECT_GT(withoutMask.second, 0u);
}

// The bundled transformers are read as intended (compiling and running
// BERT-base are bench figures: bench/transformer.sh).
TEST(AttentionWorkloads, TheBundledTransformersAreRead) {
  const scheduler::Workload bert = scheduler::loadWorkload(sourcePath("workloads/bert_base_sl128.json"));
  EXPECT_EQ(bert.dataset.labelSteps, 128u);
  EXPECT_EQ(bert.dataset.vocabulary, 30522u);
  std::size_t attention = 0;
  for (const scheduler::LayerSpec& l : bert.layers) attention += l.kind == "multi_head_attention";
  EXPECT_EQ(attention, 12u);
  const scheduler::Workload gpt = scheduler::loadWorkload(sourcePath("workloads/gpt_decoder_block.json"));
  EXPECT_EQ(gpt.dataset.labelSteps, 128u);
  for (const scheduler::LayerSpec& l : gpt.layers) {
    if (l.kind == "multi_head_attention") {
      EXPECT_TRUE(l.causalMask) << l.name;
    }
  }
}

// The bundled transformer and recurrent models are Keras 3 files
// (workloads/keras/make_keras_models.py): read, each is the same model as its
// layers written in ipusim's workload format, layer for layer (kinds, names,
// inputs, sizes, the causal mask, the wrapped recurrent layers).
void expectKerasFileIsItsLayerList(const std::string& workload, const char* layers) {
  const scheduler::Workload keras = scheduler::loadWorkload(sourcePath(workload));
  nlohmann::json j = nlohmann::json::parse(std::ifstream(sourcePath(workload)));
  j["model"] = {{"layers", nlohmann::json::parse(layers)}};
  const scheduler::Workload listed = scheduler::parseWorkload(j, "layers.json");
  expectSameLayers(keras, listed);
  EXPECT_EQ(keras.optimizer.type, listed.optimizer.type);
  EXPECT_EQ(keras.dataset.labelSteps, listed.dataset.labelSteps);
}

TEST(AttentionWorkloads, TheGptBlocksKeras3FileIsItsLayerListLayerForLayer) {
  expectKerasFileIsItsLayerList("workloads/gpt_decoder_block.json", R"([
    {"type": "embedding", "input_dim": 8192, "output_dim": 256, "name": "token_embedding"},
    {"type": "position_embedding", "sequence_length": 128, "name": "position_embedding"},
    {"type": "add", "inputs": ["token_embedding", "position_embedding"], "name": "embeddings"},
    {"type": "layer_normalization", "epsilon": 1e-12, "name": "embeddings_norm"},
    {"type": "multi_head_attention", "num_heads": 4, "key_dim": 64, "inputs": ["embeddings_norm", "embeddings_norm"], "name": "layer0_attention", "use_causal_mask": true},
    {"type": "add", "inputs": ["embeddings_norm", "layer0_attention"], "name": "layer0_attention_residual"},
    {"type": "layer_normalization", "epsilon": 1e-12, "name": "layer0_attention_norm"},
    {"type": "dense", "units": 1024, "activation": "gelu", "name": "layer0_intermediate"},
    {"type": "dense", "units": 256, "name": "layer0_output"},
    {"type": "add", "inputs": ["layer0_attention_norm", "layer0_output"], "name": "layer0_output_residual"},
    {"type": "layer_normalization", "epsilon": 1e-12, "name": "layer0_output_norm"},
    {"type": "dense", "units": 8192, "activation": "softmax", "name": "next_token"}])");
}

TEST(AttentionWorkloads, TheLstmClassifiersKeras3FileIsItsLayerListLayerForLayer) {
  expectKerasFileIsItsLayerList("workloads/text_lstm_classifier.json", R"([
    {"type": "embedding", "input_dim": 20000, "output_dim": 64, "name": "tokens"},
    {"type": "bidirectional", "layer": {"type": "lstm", "units": 32, "return_sequences": true}, "name": "bi_lstm"},
    {"type": "gru", "units": 32, "name": "gru"},
    {"type": "dense", "units": 2, "activation": "softmax"}])");
}

// ---- Keras files ----

nlohmann::json kerasTensor(const std::string& layer) {
  return {{"class_name", "__keras_tensor__"},
          {"config", {{"shape", {nullptr, 6, 5}}, {"dtype", "float32"}, {"keras_history", {layer, 0, 0}}}}};
}

nlohmann::json mhaConfig(const nlohmann::json& extra) {
  nlohmann::json c = nlohmann::json::parse(R"({"name": "mha", "trainable": true, "dtype": "float32", "num_heads": 2,
    "key_dim": 3, "value_dim": 3, "dropout": 0.0, "use_bias": true, "output_shape": null, "attention_axes": null,
    "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
    "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null},
    "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null,
    "bias_constraint": null, "seed": null})");
  for (const auto& [k, v] : extra.items()) c[k] = v;
  return c;
}

// A Keras 3 functional model: mha(x, x, use_causal_mask=...) on the input, flattened, a softmax classifier.
nlohmann::json keras3Attention(const nlohmann::json& extra, const nlohmann::json& kwargs) {
  const nlohmann::json input = {{"module", "keras.layers"}, {"class_name", "InputLayer"}, {"registered_name", nullptr},
                                {"name", "in"}, {"inbound_nodes", nlohmann::json::array()},
                                {"config", {{"batch_shape", {nullptr, 6, 5}}, {"dtype", "float32"}, {"sparse", false}, {"name", "in"}}}};
  const nlohmann::json mha = {{"module", "keras.layers"}, {"class_name", "MultiHeadAttention"}, {"registered_name", nullptr},
                              {"name", "mha"}, {"config", mhaConfig(extra)},
                              {"inbound_nodes", {{{"args", {kerasTensor("in"), kerasTensor("in")}}, {"kwargs", kwargs}}}}};
  const nlohmann::json flatten = {{"module", "keras.layers"}, {"class_name", "Flatten"}, {"registered_name", nullptr},
                                  {"name", "flatten"}, {"config", {{"name", "flatten"}, {"data_format", "channels_last"}}},
                                  {"inbound_nodes", {{{"args", {kerasTensor("mha")}}, {"kwargs", nlohmann::json::object()}}}}};
  nlohmann::json dense = {{"module", "keras.layers"}, {"class_name", "Dense"}, {"registered_name", nullptr}, {"name", "out"},
                          {"inbound_nodes", {{{"args", {kerasTensor("flatten")}}, {"kwargs", nlohmann::json::object()}}}}};
  dense["config"] = nlohmann::json::parse(R"({"name": "out", "units": 10, "activation": "softmax", "use_bias": true,
    "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
    "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null},
    "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null})");
  return {{"module", "keras"}, {"class_name", "Functional"}, {"registered_name", "Functional"},
          {"config", {{"name", "encoder"}, {"trainable", true}, {"layers", {input, mha, flatten, dense}},
                      {"input_layers", {{"in", 0, 0}}}, {"output_layers", {{"out", 0, 0}}}}}};
}

TEST(AttentionKeras, AKeras3SelfAttentionWithACausalMaskTrainsAsTheReference) {
  const std::string path = ::testing::TempDir() + "/mha_keras3.json";
  std::ofstream(path) << keras3Attention({}, {{"use_causal_mask", true}}).dump();
  nlohmann::json j = smallJob("[]", {6, 5}, kSgd, 5);  // (SGD: see the encoder block's test)
  j["model"] = {{"keras", path}};
  const scheduler::Workload w = scheduler::parseWorkload(j, "keras.json");
  ASSERT_EQ(w.layers[0].kind, "multi_head_attention");
  EXPECT_TRUE(w.layers[0].causalMask);
  EXPECT_EQ(w.layers[0].inputs.size(), 2u);
  EXPECT_EQ(w.layers[0].outputShape, (std::vector<std::uint64_t>{6, 5}));
  expectSameTraining(j, "keras.json", kSteps);
}

// TF 2.x writes mha(x, x) with the value by keyword: [["in", 0, 0, {"value": ["in", 0, 0]}]].
TEST(AttentionKeras, TheValueByKeywordOfATf2FileIsTheSecondInput) {
  nlohmann::json model = keras3Attention({{"query_shape", {nullptr, 6, 5}}}, nlohmann::json::object());
  for (auto& l : model["config"]["layers"]) {
    if (l["name"] == "in") continue;
    const std::string from = l["inbound_nodes"][0]["args"][0]["config"]["keras_history"][0];
    l["inbound_nodes"] = {{{from, 0, 0, l["name"] == "mha" ? nlohmann::json{{"value", {from, 0, 0}}} : nlohmann::json::object()}}};
  }
  const scheduler::KerasModel m = scheduler::parseKerasModel(model, "tf2.json");
  ASSERT_EQ(m.layers[0].kind, "multi_head_attention");
  EXPECT_EQ(m.layers[0].inputs.size(), 2u);
  EXPECT_FALSE(m.layers[0].causalMask);
}

// Found by the third adversarial pass of issue 33: mha(x, x, value=y) was
// read (the keyword's tensor a third input, the key); Keras's call(query,
// value, key=None) raises a TypeError for it, and for a key without a value.
TEST(AttentionKeras, AnOperandGivenBothByPositionAndByKeywordIsRefused) {
  auto error = [](const nlohmann::json& model) {
    try {
      scheduler::parseKerasModel(model, "m.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  nlohmann::json twice = keras3Attention({}, {{"value", kerasTensor("in")}});
  EXPECT_EQ(error(twice),
            "m.json: layer 'mha' (MultiHeadAttention): inbound_nodes: kwargs.value: the value is given both by position "
            "and by keyword (Keras: TypeError, multiple values for argument 'value')");
  twice["config"]["layers"][1]["inbound_nodes"][0]["args"] = {kerasTensor("in")};
  twice["config"]["layers"][1]["inbound_nodes"][0]["kwargs"] = {{"query", kerasTensor("in")}, {"value", kerasTensor("in")}};
  EXPECT_NE(error(twice).find("kwargs.query: the query is given both by position and by keyword"), std::string::npos)
      << error(twice);
  // A key without a value.
  twice["config"]["layers"][1]["inbound_nodes"][0]["kwargs"] = {{"key", kerasTensor("in")}};
  EXPECT_NE(error(twice).find("kwargs.key: given without the value before it"), std::string::npos) << error(twice);
  // TF 2.x's form: [["in", 0, 0, {"value": ...}], ["in", 0, 0, {"value": ...}]] gives the value twice too.
  nlohmann::json tf2 = keras3Attention({}, nlohmann::json::object());
  const nlohmann::json entry = {"in", 0, 0, {{"value", {"in", 0, 0}}}};
  tf2["config"]["layers"][1]["inbound_nodes"] = {{entry, entry}};
  EXPECT_NE(error(tf2).find("kwargs.value: the value is given both by position and by keyword"), std::string::npos)
      << error(tf2);
  // key=None, Keras's default, written out: the value is the key.
  nlohmann::json noKey = keras3Attention({}, {{"key", nullptr}});
  EXPECT_EQ(scheduler::parseKerasModel(noKey, "m.json").layers[0].inputs.size(), 2u);
  noKey["config"]["layers"][1]["inbound_nodes"][0]["kwargs"]["key"] = "k";
  EXPECT_NE(error(noKey).find("key: \"k\" is not modelled (a key that is not a tensor)"), std::string::npos) << error(noKey);
  // Both by keyword, none by position: read as mha(query, value).
  nlohmann::json keywords = keras3Attention({}, {{"query", kerasTensor("in")}, {"value", kerasTensor("in")}});
  keywords["config"]["layers"][1]["inbound_nodes"][0]["args"] = nlohmann::json::array();
  EXPECT_EQ(scheduler::parseKerasModel(keywords, "m.json").layers[0].inputs.size(), 2u);
}

TEST(AttentionKeras, WhatIsNotModelledIsRefusedByKey) {
  auto error = [](const nlohmann::json& extra, const nlohmann::json& kwargs) {
    try {
      scheduler::parseKerasModel(keras3Attention(extra, kwargs), "m.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const nlohmann::json none = nlohmann::json::object();
  EXPECT_NE(error({{"attention_axes", {2}}}, none).find("attention_axes"), std::string::npos);
  EXPECT_NE(error({{"output_shape", {4, 2}}}, none).find("output_shape"), std::string::npos);
  EXPECT_NE(error({{"key_dim", 0}}, none).find("key_dim"), std::string::npos);
  EXPECT_NE(error({{"kernel_constraint", {{"class_name", "MaxNorm"}, {"config", nlohmann::json::object()}}}}, none)
                .find("kernel_constraint"),
            std::string::npos);
  EXPECT_NE(error(none, {{"return_attention_scores", true}}).find("return_attention_scores"), std::string::npos);
  EXPECT_NE(error(none, {{"use_causal_mask", "yes"}}).find("use_causal_mask"), std::string::npos);
  nlohmann::json masked = keras3Attention(none, none);
  masked["config"]["layers"][1]["inbound_nodes"][0]["kwargs"]["attention_mask"] = kerasTensor("in");
  try {
    scheduler::parseKerasModel(masked, "m.json");
    ADD_FAILURE() << "an attention mask tensor was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kwargs.attention_mask"), std::string::npos) << e.what();
  }
}

TEST(AttentionWorkload, BadInputsAreRefusedByKey) {
  auto error = [](const char* layers, const nlohmann::json& shape) {
    try {
      scheduler::parseWorkload(smallJob(layers, shape, kSgd, 1), "w.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // One input, or four.
  EXPECT_NE(error(R"([{"type": "multi_head_attention", "num_heads": 2, "key_dim": 3}, {"type": "flatten"},
                      {"type": "dense", "units": 10}])", {6, 5}).find("2 or 3 inputs"), std::string::npos);
  // An image (rank 4 with the batch).
  EXPECT_NE(error(R"([{"type": "dense", "units": 4, "name": "d"},
                      {"type": "multi_head_attention", "num_heads": 2, "key_dim": 3, "inputs": ["d", "d"]},
                      {"type": "flatten"}, {"type": "dense", "units": 10}])", {4, 4, 2}).find("[steps, features]"),
            std::string::npos);
  // A key whose steps are not the value's.
  EXPECT_NE(error(R"([{"type": "dense", "units": 4, "name": "d"}, {"type": "flatten", "name": "f"},
                      {"type": "reshape", "target_shape": [3, 8], "name": "r"},
                      {"type": "multi_head_attention", "num_heads": 2, "key_dim": 3, "inputs": ["d", "d", "r"]},
                      {"type": "flatten"}, {"type": "dense", "units": 10}])", {6, 5}).find("the key has 3 steps"),
            std::string::npos);
  EXPECT_NE(error(R"([{"type": "multi_head_attention", "key_dim": 3}])", {6, 5}).find("num_heads"), std::string::npos);
}

// Found by the third adversarial pass of issue 33: the output projection
// [heads x value_dim, output_shape] was not checked (8 heads and an
// output_shape of 1.2e8 compiled a 3.84 GB kernel, and with
// allow_out_of_memory the run grew past 24 GB), and a value_dim too large
// was blamed on key_dim.
TEST(AttentionWorkload, EachProjectionIsCheckedAgainstTheTensorLimitByItsKey) {
  auto error = [](const std::string& attention) {
    try {
      const std::string layers = R"([{"type": "dense", "units": 4, "name": "d"},
        {"type": "multi_head_attention", "inputs": ["d", "d"], )" + attention + R"(},
        {"type": "global_average_pooling1d"}, {"type": "dense", "units": 10, "activation": "softmax"}])";
      scheduler::parseWorkload(smallJob(layers.c_str(), {6, 5}, kSgd, 1), "w.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string output = error(R"("num_heads": 8, "key_dim": 1, "output_shape": 120000000)");
  EXPECT_NE(output.find("w.json: model.layers[1].output_shape: 120000000: the output projection needs 3840000000 bytes of "
                        "float weights (8 heads x 1 value_dim x 120000000)"),
            std::string::npos)
      << output;
  const std::string value = error(R"("num_heads": 1, "key_dim": 1, "value_dim": 1000000000)");
  EXPECT_NE(value.find("w.json: model.layers[1].value_dim: the value projection needs 16000000000 bytes"), std::string::npos)
      << value;
  const std::string key = error(R"("num_heads": 1, "key_dim": 1000000000)");
  EXPECT_NE(key.find("w.json: model.layers[1].key_dim: the query projection needs 16000000000 bytes"), std::string::npos)
      << key;
}

TEST(AttentionKeras, KerasHubsPositionEmbeddingIsRead) {
  const nlohmann::json position = {
      {"module", "keras_hub.src.layers.modeling.position_embedding"}, {"class_name", "PositionEmbedding"},
      {"registered_name", "keras_hub>PositionEmbedding"}, {"name", "positions"},
      {"config", {{"name", "positions"}, {"trainable", true}, {"dtype", "float32"}, {"sequence_length", 6},
                  {"initializer", {{"module", "keras.initializers"}, {"class_name", "GlorotUniform"},
                                   {"config", {{"seed", nullptr}}}, {"registered_name", nullptr}}}}},
      {"inbound_nodes", {{{"args", {kerasTensor("in")}}, {"kwargs", nlohmann::json::object()}}}}};
  nlohmann::json model = keras3Attention({}, nlohmann::json::object());
  auto& layers = model["config"]["layers"];
  layers.insert(layers.begin() + 1, position);
  layers[2]["inbound_nodes"][0]["args"] = {kerasTensor("positions"), kerasTensor("positions")};
  const scheduler::KerasModel m = scheduler::parseKerasModel(model, "positions.json");
  ASSERT_EQ(m.layers[0].kind, "position_embedding");
  EXPECT_EQ(m.layers[0].outputShape, (std::vector<std::uint64_t>{6, 5}));
  layers[1]["config"]["sequence_length"] = 8;
  try {
    scheduler::parseKerasModel(model, "positions.json");
    ADD_FAILURE() << "8 positions for 6 steps were read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sequence_length"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::testing::attention_test
