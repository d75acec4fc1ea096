// SimpleRNN, LSTM and GRU (issue "Every model users bring (2)"): unrolled over
// the steps, trained by backpropagation through time from the forward ops'
// own gradients. Each model, compiled and run in the SystemC model, computes
// the same losses as the CPU reference (cpu_reference_recurrent.cpp, the
// cells written out step by step) over 20 steps within 1e-4 relative and ends
// with the same weights; mixed_float16 tracks float32 within 1%. Keras files
// read (Keras 2's hard_sigmoid gates, Orthogonal recurrent kernels); what is
// not modelled is refused by key.
#include "cpu_reference_recurrent.hpp"
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace ipusim::testing::recurrent_test {
namespace {

constexpr std::uint64_t kSteps = 20;
const nlohmann::json kAdam = {{"type", "adam"}, {"learning_rate", 0.01}};
const nlohmann::json kSgd = {{"type", "sgd"}, {"learning_rate", 0.1}, {"momentum", 0.9}};

TEST(RecurrentAcceptance, SimpleRnnOverASequenceTrainsAsTheReference) {
  expectSameTraining(smallJob(R"([
    {"type": "simple_rnn", "units": 8, "return_sequences": true, "name": "rnn"},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {5, 3}, kAdam, 2), "rnn.json", kSteps);
}

TEST(RecurrentAcceptance, LstmLastStateTrainsAsTheReference) {
  expectSameTraining(smallJob(R"([
    {"type": "lstm", "units": 6, "name": "lstm"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {6, 4}, kSgd, 3), "lstm.json", kSteps);
}

// Token ids, an embedding, two stacked LSTMs (the first backwards, every
// step returned; hard_sigmoid gates, no bias in the second), as a text classifier.
TEST(RecurrentAcceptance, StackedLstmsOnTokensTrainAsTheReference) {
  expectSameTraining(smallJob(R"([
    {"type": "embedding", "input_dim": 40, "output_dim": 8, "name": "tokens"},
    {"type": "lstm", "units": 8, "return_sequences": true, "go_backwards": true, "name": "lstm_1"},
    {"type": "lstm", "units": 5, "recurrent_activation": "hard_sigmoid", "use_bias": false, "name": "lstm_2"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {7}, kAdam, 4), "stacked.json", kSteps);
}

// GRU, the reset gate after the recurrent product (Keras 2.3+'s and 3's
// default: two biases) and before it (Keras 2.0-2.2's), stacked.
TEST(RecurrentAcceptance, GruBothWaysTrainsAsTheReference) {
  expectSameTraining(smallJob(R"([
    {"type": "gru", "units": 7, "return_sequences": true, "name": "gru_after"},
    {"type": "gru", "units": 5, "reset_after": false, "go_backwards": true, "name": "gru_before"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {6, 4}, kAdam, 6), "gru.json", kSteps);
}

// Bidirectional: every step of an LSTM both ways, concatenated; a GRU both
// ways, its last states averaged; a SimpleRNN's sequences multiplied.
TEST(RecurrentAcceptance, BidirectionalTrainsAsTheReference) {
  expectSameTraining(smallJob(R"([
    {"type": "bidirectional", "layer": {"type": "lstm", "units": 5, "return_sequences": true}, "name": "bi_lstm"},
    {"type": "bidirectional", "layer": {"type": "simple_rnn", "units": 4, "return_sequences": true}, "merge_mode": "mul",
     "name": "bi_rnn"},
    {"type": "bidirectional", "layer": {"type": "gru", "units": 6}, "merge_mode": "ave", "name": "bi_gru"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {5, 3}, kAdam, 7), "bidirectional.json", kSteps);
}

TEST(RecurrentAcceptance, MixedPrecisionTracksFloat32) {
  expectHalfTracksFloat32(smallJob(R"([
    {"type": "lstm", "units": 6, "name": "lstm"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {6, 4}, kSgd, 3), "mixed_float16", "lstm.json", kSteps);
}

TEST(RecurrentWeights, TheRecurrentKernelIsOrthogonalAndTheForgetBiasStartsAtOne) {
  const scheduler::Workload w = scheduler::parseWorkload(smallJob(R"([
    {"type": "lstm", "units": 6, "name": "lstm"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {6, 4}, kSgd, 3), "lstm.json");
  const scheduler::CompiledWorkload c = scheduler::compile(w);
  bool sawRecurrent = false, sawBias = false;
  for (ir::Id t : c.weightTensors) {
    const ir::Tensor& tensor = c.exe.tensors[t];
    const std::vector<double> v = ir::initialValues(tensor);
    if (tensor.name == "lstm/recurrent_kernel") {  // [6, 24]: orthonormal rows
      sawRecurrent = true;
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b) {
          double dot = 0;
          for (int j = 0; j < 24; ++j) dot += v[a * 24 + j] * v[b * 24 + j];
          EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-5) << a << ", " << b;
        }
    }
    if (tensor.name == "lstm/bias") {
      sawBias = true;
      for (int j = 0; j < 24; ++j) EXPECT_EQ(v[j], j >= 6 && j < 12 ? 1.0 : 0.0) << j;
    }
  }
  EXPECT_TRUE(sawRecurrent);
  EXPECT_TRUE(sawBias);
}

// ---- Keras files ----

// A TF 2.x Sequential file as Keras 2.0-2.2 wrote an LSTM (hard_sigmoid gates).
nlohmann::json kerasLstm(const nlohmann::json& extra) {
  nlohmann::json lstm = nlohmann::json::parse(R"({"name": "lstm_1", "trainable": true, "batch_input_shape": [null, 6, 4],
    "dtype": "float32", "return_sequences": false, "return_state": false, "go_backwards": false, "stateful": false,
    "unroll": false, "units": 6, "activation": "tanh", "recurrent_activation": "hard_sigmoid", "use_bias": true,
    "kernel_initializer": {"class_name": "VarianceScaling", "config": {"scale": 1.0, "mode": "fan_avg", "distribution": "uniform", "seed": null}},
    "recurrent_initializer": {"class_name": "Orthogonal", "config": {"gain": 1.0, "seed": null}},
    "bias_initializer": {"class_name": "Zeros", "config": {}}, "unit_forget_bias": true,
    "kernel_regularizer": null, "recurrent_regularizer": null, "bias_regularizer": null, "activity_regularizer": null,
    "kernel_constraint": null, "recurrent_constraint": null, "bias_constraint": null,
    "dropout": 0.0, "recurrent_dropout": 0.0, "implementation": 1})");
  for (const auto& [k, v] : extra.items()) lstm[k] = v;
  nlohmann::json dense = nlohmann::json::parse(R"({"name": "dense_1", "trainable": true, "units": 10, "activation": "softmax",
    "use_bias": true, "kernel_initializer": {"class_name": "VarianceScaling", "config": {"scale": 1.0, "mode": "fan_avg", "distribution": "uniform", "seed": null}},
    "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null,
    "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null})");
  return {{"class_name", "Sequential"}, {"keras_version", "2.2.4"}, {"backend", "tensorflow"},
          {"config", {{"name", "sequential_1"},
                      {"layers", {{{"class_name", "LSTM"}, {"config", lstm}}, {{"class_name", "Dense"}, {"config", dense}}}}}}};
}

TEST(RecurrentKeras, AKeras2LstmFileTrainsAsTheReference) {
  const std::string path = ::testing::TempDir() + "/lstm_keras2.json";
  std::ofstream(path) << kerasLstm({}).dump();
  nlohmann::json j = smallJob("[]", {6, 4}, kSgd, 5);
  j["model"] = {{"keras", path}};
  const scheduler::Workload w = scheduler::parseWorkload(j, "keras.json");
  ASSERT_EQ(w.layers[0].kind, "lstm");
  EXPECT_EQ(w.layers[0].recurrentActivation, scheduler::Activation::HardSigmoid);
  EXPECT_DOUBLE_EQ(w.layers[0].recurrentActivationParams.hardSigmoidSlope, 0.2);  // Keras 2's
  expectSameTraining(j, "keras.json", kSteps);
}

// Keras 3 writes both layers of a Bidirectional (forward_lstm, backward_lstm).
TEST(RecurrentKeras, AKeras3BidirectionalReadsBothLayers) {
  nlohmann::json lstm = kerasLstm({})["config"]["layers"][0]["config"];
  lstm.erase("batch_input_shape");
  lstm.erase("implementation");
  lstm["recurrent_activation"] = "sigmoid";
  lstm["return_sequences"] = true;
  nlohmann::json backward = lstm;
  backward["go_backwards"] = true;
  backward["name"] = "backward_lstm";
  lstm["name"] = "forward_lstm";
  const nlohmann::json bi = {{"module", "keras.layers"}, {"class_name", "Bidirectional"}, {"registered_name", nullptr},
                             {"config", {{"name", "bidirectional"}, {"trainable", true}, {"merge_mode", "sum"},
                                         {"layer", {{"module", "keras.layers"}, {"class_name", "LSTM"}, {"config", lstm},
                                                    {"registered_name", nullptr}}},
                                         {"backward_layer", {{"module", "keras.layers"}, {"class_name", "LSTM"},
                                                             {"config", backward}, {"registered_name", nullptr}}}}}};
  nlohmann::json model = kerasLstm({});
  model["config"]["layers"] = {{{"class_name", "InputLayer"}, {"config", {{"batch_shape", {nullptr, 6, 4}}, {"name", "in"}}}},
                               bi, {{"class_name", "Flatten"}, {"config", {{"name", "flatten"}}}},
                               model["config"]["layers"][1]};
  model.erase("keras_version");
  model.erase("backend");
  const scheduler::KerasModel m = scheduler::parseKerasModel(model, "bi.json");
  ASSERT_EQ(m.layers[0].kind, "bidirectional");
  ASSERT_EQ(m.layers[0].wrapped.size(), 2u);
  EXPECT_FALSE(m.layers[0].wrapped[0].goBackwards);
  EXPECT_TRUE(m.layers[0].wrapped[1].goBackwards);
  EXPECT_EQ(m.layers[0].outputShape, (std::vector<std::uint64_t>{6, 6}));
  backward["go_backwards"] = false;
  model["config"]["layers"][1]["config"]["backward_layer"]["config"] = backward;
  try {
    scheduler::parseKerasModel(model, "bi.json");
    ADD_FAILURE() << "a backward layer that runs forward was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("backward_layer"), std::string::npos) << e.what();
  }
}

// The wrapped layer of a workload's bidirectional names its type (found by fuzz_workload).
TEST(RecurrentWorkload, ABidirectionalLayerWithoutATypeIsRefusedByKey) {
  for (const char* layer : {R"({"units": 4})", R"({"type": "dense", "units": 4})", R"({"type": "lstm"})"}) {
    nlohmann::json j = smallJob("[]", {6, 4}, kSgd, 1);
    j["model"]["layers"] = {{{"type", "bidirectional"}, {"layer", nlohmann::json::parse(layer)}},
                            {{"type", "flatten"}},
                            {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}};
    try {
      scheduler::parseWorkload(j, "w.json");
      ADD_FAILURE() << layer << " was read";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("model.layers[0].layer."), std::string::npos) << e.what();
    }
  }
}

TEST(RecurrentKeras, WhatIsNotModelledIsRefusedByKey) {
  auto error = [](const nlohmann::json& extra) {
    try {
      scheduler::parseKerasModel(kerasLstm(extra), "m.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error({{"return_state", true}}).find("return_state: true is not modelled"), std::string::npos);
  EXPECT_NE(error({{"dropout", 0.2}}).find("dropout: 0.2 is not modelled"), std::string::npos);
  EXPECT_NE(error({{"stateful", true}}).find("stateful"), std::string::npos);
  EXPECT_NE(error({{"batch_input_shape", {nullptr, 24}}}).find("[steps, features]"), std::string::npos);
}

// Keras's masks (an Embedding's mask_zero): a step whose token id is 0 keeps
// the states it read. Ids drawn from a vocabulary of 3, so a third of the
// steps are masked, scattered (Keras masks any step whose id is 0).
TEST(MaskedRecurrent, AnLstmOverPaddedTokensTrainsAsTheReference) {
  expectSameTraining(smallJob(R"([
    {"type": "embedding", "input_dim": 3, "output_dim": 8, "mask_zero": true, "name": "tokens"},
    {"type": "lstm", "units": 6, "name": "lstm"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {7}, kAdam, 11), "masked_lstm.json", kSteps);
}

// The mask carried through Dense and LayerNormalization (Keras's
// supports_masking) from a GRU's returned sequence into a backwards GRU, and
// a SimpleRNN's into an Add with the embedding.
TEST(MaskedRecurrent, TheMaskIsCarriedThroughTheLayersThatSupportIt) {
  expectSameTraining(smallJob(R"([
    {"type": "embedding", "input_dim": 3, "output_dim": 6, "mask_zero": true, "name": "tokens"},
    {"type": "simple_rnn", "units": 6, "return_sequences": true, "name": "rnn"},
    {"type": "add", "inputs": ["tokens", "rnn"], "name": "residual"},
    {"type": "gru", "units": 5, "return_sequences": true, "name": "gru_1"},
    {"type": "dense", "units": 4, "activation": "tanh", "name": "projection"},
    {"type": "layer_normalization", "name": "norm"},
    {"type": "gru", "units": 5, "reset_after": false, "go_backwards": true, "name": "gru_2"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {6}, kAdam, 12), "masked_stack.json", kSteps);
}

// Bidirectional: Keras forces zero_output_for_mask on both layers when they
// return sequences (their masked steps output zeros).
TEST(MaskedRecurrent, ABidirectionalLayerZeroesItsMaskedOutputs) {
  expectSameTraining(smallJob(R"([
    {"type": "embedding", "input_dim": 3, "output_dim": 5, "mask_zero": true, "name": "tokens"},
    {"type": "bidirectional", "layer": {"type": "lstm", "units": 4, "return_sequences": true}, "name": "bi_lstm"},
    {"type": "bidirectional", "layer": {"type": "gru", "units": 3}, "merge_mode": "sum", "name": "bi_gru"},
    {"type": "dense", "units": 10, "activation": "softmax"}])", {6}, kAdam, 13), "masked_bidirectional.json", kSteps);
}

// The mask is not a no-op: with mask_zero each LSTM step selects its states
// by two IdMask gates (the reference carries them: the acceptance tests
// above); without it, none. And the reference's masked step carries h.
TEST(MaskedRecurrent, EachStepIsGatedOnlyUnderAMask) {
  for (const bool mask : {true, false}) {
    nlohmann::json j = smallJob(R"([
      {"type": "embedding", "input_dim": 3, "output_dim": 8, "name": "tokens"},
      {"type": "lstm", "units": 6, "name": "lstm"},
      {"type": "dense", "units": 10, "activation": "softmax"}])", {7}, kAdam, 11);
    j["model"]["layers"][0]["mask_zero"] = mask;
    const scheduler::OpGraph g = scheduler::buildTrainingGraph(scheduler::parseWorkload(j, "m.json"));
    std::size_t gates = 0;
    for (const scheduler::Op& op : g.ops) gates += op.kind == scheduler::OpKind::IdMask;
    EXPECT_EQ(gates, mask ? 2u * 7u : 0u) << "mask_zero " << mask;
  }
  RecurrentGeometry geometry;
  geometry.batch = 1, geometry.steps = 3, geometry.features = 1, geometry.units = 2, geometry.returnSequences = true;
  RecurrentCache cache;
  cache.ids = {5, 0, 7};
  const std::vector<float> y = recurrentForward(geometry, {0.5f, -1.0f, 2.0f}, {0.3f, -0.2f}, {0.1f, 0.2f, -0.3f, 0.4f},
                                                {0.05f, -0.05f}, cache);
  ASSERT_EQ(y.size(), 6u);
  EXPECT_EQ(y[2], y[0]);  // the masked step outputs the h it carries
  EXPECT_EQ(y[3], y[1]);
  EXPECT_NE(y[4], y[2]);
}

// A mask reaching a layer that does not model it, and a masked model output
// under a loss that does not take the mask (masked_loss_test.cpp: sparse
// categorical cross-entropy does), are refused, naming the layer.
TEST(MaskedRecurrent, WhatDoesNotModelAMaskIsRefusedByName) {
  auto error = [](const char* layers, const char* loss = "sparse_categorical_crossentropy") {
    try {
      nlohmann::json j = smallJob(layers, {6}, kAdam, 1);
      j["loss"] = {{"type", loss}};
      scheduler::compile(scheduler::parseWorkload(j, "m.json"));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error(R"([
    {"type": "embedding", "input_dim": 5, "output_dim": 4, "mask_zero": true, "name": "tokens"},
    {"type": "flatten", "name": "flat"},
    {"type": "dense", "units": 10, "activation": "softmax"}])")
                .find("layer 'flat' (flatten): its input carries Keras's mask (an Embedding's mask_zero"),
            std::string::npos);
  EXPECT_NE(error(R"([
    {"type": "embedding", "input_dim": 5, "output_dim": 4, "mask_zero": true, "name": "tokens"},
    {"type": "lstm", "units": 4, "return_sequences": true},
    {"type": "dense", "units": 10, "activation": "softmax", "name": "out"}])", "mean_squared_error")
                .find("the output layer ('out') carries Keras's mask (an Embedding's mask_zero or a Masking layer's): a masked "
                      "mean_squared_error is not modelled"),
            std::string::npos);
}

}  // namespace
}  // namespace ipusim::testing::recurrent_test
