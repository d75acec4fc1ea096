// Reading the activations and activation-like layers: Keras configs as
// Keras 3 and TF 2.x write them (every key used, ignored or checked) and
// ipusim's workload keys, their defaults, and one clear error per bad value
// naming the file, the layer and the key; and what they build in the
// training graph.
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace ipusim::scheduler::activation_layers_reading_test {
namespace {

using json = nlohmann::json;

// A Keras 3 Sequential model.to_json() of `layers` ({"class_name", "config"}) over inputs of `shape`.
json keras3(const std::vector<json>& layers, const std::vector<int>& shape) {
  json batchShape = json::array({nullptr});
  for (int d : shape) batchShape.push_back(d);
  json list = json::array({{{"module", "keras.layers"},
                            {"class_name", "InputLayer"},
                            {"config", {{"batch_shape", batchShape}, {"dtype", "float32"}, {"name", "input"}}},
                            {"registered_name", nullptr}}});
  for (json l : layers) {
    l["module"] = "keras.layers";
    l["registered_name"] = nullptr;
    list.push_back(l);
  }
  return {{"module", "keras"}, {"class_name", "Sequential"}, {"config", {{"name", "sequential"}, {"layers", list}}},
          {"registered_name", nullptr}};
}

// The same as TF 2.x writes it.
json tf2(const std::vector<json>& layers, const std::vector<int>& shape) {
  json batchShape = json::array({nullptr});
  for (int d : shape) batchShape.push_back(d);
  json list = json::array({{{"class_name", "InputLayer"},
                            {"config", {{"batch_input_shape", batchShape}, {"dtype", "float32"}, {"name", "input"}}}}});
  for (const json& l : layers) list.push_back(l);
  return {{"class_name", "Sequential"}, {"config", {{"name", "sequential"}, {"layers", list}}}, {"keras_version", "2.11.0"},
          {"backend", "tensorflow"}};
}

json layer(const std::string& cls, json config) {
  if (!config.contains("name")) config["name"] = cls;
  config["trainable"] = true;
  config["dtype"] = "float32";
  return {{"class_name", cls}, {"config", config}};
}

json dense(const json& activation, int units = 6, const std::string& name = "dense") {
  return layer("Dense", {{"name", name},
                         {"units", units},
                         {"activation", activation},
                         {"use_bias", true},
                         {"kernel_initializer", {{"class_name", "GlorotUniform"}, {"config", {{"seed", nullptr}}}}},
                         {"bias_initializer", {{"class_name", "Zeros"}, {"config", json::object()}}},
                         {"kernel_regularizer", nullptr},
                         {"bias_regularizer", nullptr},
                         {"activity_regularizer", nullptr},
                         {"kernel_constraint", nullptr},
                         {"bias_constraint", nullptr}});
}

std::string kerasError(const json& j) {
  try {
    parseKerasModel(j, "model.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

void expectMentions(const std::string& message, const std::vector<std::string>& fragments) {
  for (const auto& f : fragments) EXPECT_NE(message.find(f), std::string::npos) << "'" << f << "' not in: " << message;
}

TEST(ActivationLayersReading, Keras3LayersAndTheirConstants) {
  const KerasModel m = parseKerasModel(
      keras3({layer("ReLU", {{"max_value", 6.0}, {"negative_slope", 0.0}, {"threshold", 0.0}}),
              layer("ReLU", {{"name", "thresholded"}, {"max_value", nullptr}, {"negative_slope", 0.1}, {"threshold", 0.5}}),
              layer("LeakyReLU", {{"negative_slope", 0.1}}),
              layer("ELU", json::object()),  // Keras 3 writes no alpha
              layer("PReLU", {{"alpha_initializer", {{"module", "keras.initializers"}, {"class_name", "Zeros"},
                                                     {"config", json::object()}, {"registered_name", nullptr}}},
                              {"alpha_regularizer", nullptr},
                              {"alpha_constraint", nullptr},
                              {"shared_axes", json::array({1})}}),
              layer("Softmax", {{"axis", -1}}),
              layer("Rescaling", {{"scale", {{"class_name", "__numpy__"},
                                             {"config", {{"value", {1, 2, 3, 4, 5, 6}}, {"dtype", "float32"}}}}},
                                  {"offset", 0.5}}),
              layer("Normalization", {{"axis", json::array({-1})},
                                      {"invert", false},
                                      {"mean", {0, 1, 2, 3, 4, 5}},
                                      {"variance", {1, 1, 2, 2, 3, 3}}}),
              dense("softmax", 10)},
             {4, 6}),
      "model.json");
  ASSERT_EQ(m.layers.size(), 9u);
  EXPECT_EQ(m.layers[0].kind, "relu");
  EXPECT_EQ(m.layers[0].activationParams.maxValue, 6.0);
  EXPECT_FALSE(m.layers[1].activationParams.maxValue.has_value());
  EXPECT_EQ(m.layers[1].activationParams.negativeSlope, 0.1);
  EXPECT_EQ(m.layers[1].activationParams.threshold, 0.5);
  EXPECT_EQ(m.layers[2].kind, "leaky_relu");
  EXPECT_EQ(m.layers[2].activation, Activation::LeakyRelu);
  EXPECT_EQ(m.layers[2].activationParams.negativeSlope, 0.1);
  EXPECT_EQ(m.layers[3].kind, "elu");
  EXPECT_EQ(m.layers[3].activationParams.alpha, 1.0);
  EXPECT_EQ(m.layers[4].kind, "prelu");
  EXPECT_EQ(m.layers[4].axes, std::vector<std::int64_t>{1});
  EXPECT_EQ(m.layers[4].activationParams.alpha, 0.0);
  EXPECT_EQ(m.layers[5].kind, "softmax");
  EXPECT_EQ(m.layers[5].axis, 2);  // resolved: the last axis of a rank-3 input (with the batch)
  EXPECT_EQ(m.layers[5].activation, Activation::Softmax);
  EXPECT_EQ(m.layers[6].kind, "rescaling");
  EXPECT_EQ(m.layers[6].scaleFactor.shape, std::vector<std::uint64_t>{6});
  EXPECT_EQ(m.layers[6].offset.values, std::vector<double>{0.5});
  EXPECT_EQ(m.layers[7].kind, "normalization");
  EXPECT_EQ(m.layers[7].axes, std::vector<std::int64_t>{2});
  EXPECT_EQ(m.layers[7].variance.values[5], 3.0);
  EXPECT_FALSE(m.layers[7].invert);
}

// TF 2.x names LeakyReLU's slope alpha, writes ELU's alpha, and its
// Normalization and Rescaling the same keys as Keras 3.
TEST(ActivationLayersReading, Tf2LayersAndTheirConstants) {
  const KerasModel m = parseKerasModel(
      tf2({layer("LeakyReLU", {{"alpha", 0.3}}), layer("ELU", {{"alpha", 0.5}}), layer("PReLU", {{"alpha_initializer", {{"class_name", "Constant"}, {"config", {{"value", 0.25}}}}}, {"alpha_regularizer", nullptr}, {"alpha_constraint", nullptr}, {"shared_axes", nullptr}}),
           layer("Rescaling", {{"scale", 0.00392156862745098}, {"offset", 0.0}}),
           layer("Normalization", {{"axis", -1}, {"mean", nullptr}, {"variance", nullptr}}), dense("softmax", 10)},
          {6}),
      "model.json");
  EXPECT_EQ(m.format, "tf2");
  EXPECT_EQ(m.layers[0].activationParams.negativeSlope, 0.3);
  EXPECT_EQ(m.layers[1].activationParams.alpha, 0.5);
  EXPECT_EQ(m.layers[2].activationParams.alpha, 0.25);
  EXPECT_TRUE(m.layers[2].axes.empty());
  EXPECT_EQ(m.layers[3].scaleFactor.values, std::vector<double>{0.00392156862745098});
  EXPECT_FALSE(m.layers[4].mean.given());
}

// Every Keras activation name, the aliases, Keras 3's serialized function,
// and the names models write for gelu(approximate=True).
TEST(ActivationLayersReading, EveryActivationName) {
  const std::vector<std::pair<json, Activation>> names = {
      {"linear", Activation::Linear},       {"relu", Activation::Relu},           {"leaky_relu", Activation::LeakyRelu},
      {"relu6", Activation::Relu6},         {"elu", Activation::Elu},             {"selu", Activation::Selu},
      {"softplus", Activation::Softplus},   {"softsign", Activation::Softsign},   {"silu", Activation::Silu},
      {"swish", Activation::Silu},          {"gelu", Activation::Gelu},           {"tanh", Activation::Tanh},
      {"sigmoid", Activation::Sigmoid},     {"exponential", Activation::Exponential},
      {"hard_sigmoid", Activation::HardSigmoid}, {"hard_silu", Activation::HardSilu}, {"hard_swish", Activation::HardSilu},
      {"mish", Activation::Mish},           {"gelu_approximate", Activation::GeluApproximate},
      {"keras_hub>gelu_approximate", Activation::GeluApproximate}, {"keras_nlp>gelu_approximate", Activation::GeluApproximate},
      {"Text>gelu", Activation::GeluApproximate},
      {{{"module", "keras_hub.src.utils.keras_utils"}, {"class_name", "function"}, {"config", "keras_hub>gelu_approximate"},
        {"registered_name", "function"}},
       Activation::GeluApproximate},
      {{{"module", "keras.activations"}, {"class_name", "function"}, {"config", "mish"}, {"registered_name", "function"}},
       Activation::Mish}};
  for (const auto& [name, a] : names) {
    const KerasModel m = parseKerasModel(keras3({dense(name), dense("softmax", 10, "out")}, {6}), "model.json");
    EXPECT_EQ(m.layers[0].activation, a) << name.dump();
  }
  const KerasModel leaky = parseKerasModel(keras3({dense("leaky_relu"), dense("softmax", 10, "out")}, {6}), "model.json");
  EXPECT_EQ(leaky.layers[0].activationParams.negativeSlope, 0.2);  // keras.activations.leaky_relu's default
  const KerasModel six = parseKerasModel(keras3({dense("relu6"), dense("softmax", 10, "out")}, {6}), "model.json");
  EXPECT_EQ(six.layers[0].activationParams.maxValue, 6.0);
}

// hard_sigmoid: Keras 3's relu6(x + 3) / 6 (slope 1/6), Keras 2's
// clip(0.2 x + 0.5, 0, 1): a file is read as the Keras that wrote it.
TEST(ActivationLayersReading, HardSigmoidFollowsTheKerasThatWroteTheFile) {
  const KerasModel k3 = parseKerasModel(keras3({dense("hard_sigmoid"), dense("softmax", 10, "out")}, {6}), "model.json");
  EXPECT_DOUBLE_EQ(k3.layers[0].activationParams.hardSigmoidSlope, 1.0 / 6);
  const KerasModel k2 = parseKerasModel(tf2({dense("hard_sigmoid"), dense("softmax", 10, "out")}, {6}), "model.json");
  EXPECT_DOUBLE_EQ(k2.layers[0].activationParams.hardSigmoidSlope, 0.2);
  json workload = {{"dataset", {{"format", "synthetic"}, {"features", 6}, {"classes", 10}}},
                   {"model", {{"layers", {{{"type", "dense"}, {"units", 6}, {"activation", "hard_sigmoid"}},
                                          {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}}}}}};
  EXPECT_DOUBLE_EQ(parseWorkload(workload, "w.json").layers[0].activationParams.hardSigmoidSlope, 1.0 / 6);
}

TEST(ActivationLayersReadingErrors, KerasValuesNotModelled) {
  auto error = [](const json& l, std::vector<int> shape = {4, 6}) { return kerasError(keras3({l, dense("softmax", 10, "out")}, shape)); };
  expectMentions(error(layer("ReLU", {{"name", "r"}, {"max_value", -1.0}})),
                 {"model.json", "layer 'r' (ReLU)", "max_value", "-1", "negative"});
  expectMentions(error(layer("ReLU", {{"name", "r"}, {"negative_slope", -0.5}})), {"layer 'r' (ReLU)", "negative_slope", "-0.5"});
  expectMentions(error(layer("ReLU", {{"name", "r"}, {"threshold", -0.5}})), {"layer 'r' (ReLU)", "threshold", "-0.5"});
  expectMentions(kerasError(tf2({layer("LeakyReLU", {{"name", "l"}, {"alpha", -0.3}}), dense("softmax", 10, "out")}, {6})),
                 {"layer 'l' (LeakyReLU)", "alpha", "-0.3", "negative"});
  expectMentions(error(layer("ELU", {{"name", "e"}, {"alpha", -1.0}})), {"layer 'e' (ELU)", "alpha", "-1", "not modelled"});
  expectMentions(error(layer("PReLU", {{"name", "p"}, {"shared_axes", {2}}})),
                 {"layer 'p' (PReLU)", "shared_axes", "only leading axes", "[2]"});
  expectMentions(error(layer("PReLU", {{"name", "p"}, {"shared_axes", {3}}})), {"layer 'p' (PReLU)", "shared_axes", "3", "4x6"});
  expectMentions(error(layer("PReLU", {{"name", "p"}, {"alpha_regularizer", {{"class_name", "OrthogonalRegularizer"}, {"config", {{"factor", 0.01}, {"mode", "rows"}}}}}})),
                 {"layer 'p' (PReLU)", "alpha_regularizer", "OrthogonalRegularizer", "not modelled"});
  expectMentions(error(layer("PReLU", {{"name", "p"}, {"alpha_initializer", {{"class_name", "RandomNormal"}, {"config", json::object()}}}})),
                 {"layer 'p' (PReLU)", "alpha_initializer", "RandomNormal", "not modelled"});
  expectMentions(error(layer("Softmax", {{"name", "s"}, {"axis", {1, 2}}})), {"layer 's' (Softmax)", "axis", "several axes"});
  expectMentions(error(layer("Softmax", {{"name", "s"}, {"axis", 0}})), {"layer 's' (Softmax)", "axis", "batch"});
  expectMentions(error(layer("Rescaling", {{"name", "r"}, {"scale", {1, 2, 3}}})),
                 {"layer 'r' (Rescaling)", "scale", "does not broadcast", "4x6"});
  expectMentions(error(layer("Rescaling", {{"name", "r"}, {"scale", {{1, 2}, {3}}}})), {"layer 'r' (Rescaling)", "scale", "ragged"});
  expectMentions(error(layer("Rescaling", {{"name", "r"}, {"scale", "x"}})), {"layer 'r' (Rescaling)", "scale", "expected a number"});
  expectMentions(error(layer("Normalization", {{"name", "n"}, {"mean", {1, 2, 3, 4, 5, 6}}, {"variance", nullptr}})),
                 {"layer 'n' (Normalization)", "variance", "both mean and variance"});
  expectMentions(error(layer("Normalization", {{"name", "n"}, {"mean", {1, 2}}, {"variance", {1, 2}}})),
                 {"layer 'n' (Normalization)", "mean", "does not broadcast"});
  expectMentions(error(layer("Normalization", {{"name", "n"}, {"axis", {5}}})), {"layer 'n' (Normalization)", "axis", "5"});
  expectMentions(error(layer("Normalization", {{"name", "n"}, {"mean", {1, 2, 3, 4, 5, 6}}, {"variance", {1, 1, 1, 1, 1, -1}}})),
                 {"layer 'n' (Normalization)", "variance", "negative"});
  expectMentions(error(layer("ELU", {{"name", "e"}, {"beta", 1.0}})), {"layer 'e' (ELU)", "beta", "not a key"});
  // An unknown activation lists the known ones.
  expectMentions(kerasError(keras3({dense("crelu"), dense("softmax", 10, "out")}, {6})),
                 {"layer 'dense' (Dense)", "activation", "'crelu' is not modelled", "relu6", "selu", "hard_swish",
                  "gelu_approximate"});
}

json workloadWith(const json& layers) {
  return {{"dataset", {{"format", "synthetic"}, {"features", 24}, {"classes", 10}, {"input_shape", {4, 6}}}},
          {"model", {{"layers", layers}}}};
}

std::string workloadError(const json& layers) {
  try {
    parseWorkload(workloadWith(layers), "w.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ActivationLayersReading, WorkloadKeysAndDefaults) {
  const Workload w = parseWorkload(workloadWith(json::parse(R"([
    {"type": "relu"}, {"type": "relu", "max_value": 6, "threshold": 1}, {"type": "leaky_relu"}, {"type": "elu"},
    {"type": "prelu", "shared_axes": 1}, {"type": "softmax", "axis": 1}, {"type": "rescaling", "scale": [1, 2, 3, 4, 5, 6]},
    {"type": "normalization", "axis": null}, {"type": "normalization", "mean": 1, "variance": 4, "invert": true},
    {"type": "flatten"}, {"type": "dense", "units": 10, "activation": "softmax"}])")),
                                   "w.json");
  EXPECT_EQ(w.layers[0].activation, Activation::Relu);
  EXPECT_FALSE(w.layers[0].activationParams.maxValue.has_value());
  EXPECT_EQ(w.layers[1].activationParams.maxValue, 6.0);
  EXPECT_EQ(w.layers[1].activationParams.threshold, 1.0);
  EXPECT_EQ(w.layers[2].activationParams.negativeSlope, 0.3);  // LeakyReLU's default
  EXPECT_EQ(w.layers[3].activationParams.alpha, 1.0);
  EXPECT_EQ(w.layers[4].axes, std::vector<std::int64_t>{1});
  EXPECT_EQ(w.layers[5].axis, 1);
  EXPECT_EQ(w.layers[6].offset.values, std::vector<double>{0.0});
  EXPECT_TRUE(w.layers[7].axes.empty());
  EXPECT_TRUE(w.layers[8].invert);
  EXPECT_EQ(w.layers[8].axes, std::vector<std::int64_t>{2});  // -1 resolved
}

TEST(ActivationLayersReadingErrors, WorkloadValuesNameTheirKey) {
  expectMentions(workloadError(json::parse(R"([{"type": "relu", "max_value": -2}, {"type": "flatten"}, {"type": "dense", "units": 10}])")),
                 {"w.json", "model.layers[0].max_value", "-2", "negative"});
  expectMentions(workloadError(json::parse(R"([{"type": "leaky_relu", "alpha": 0.2}, {"type": "flatten"}, {"type": "dense", "units": 10}])")),
                 {"model.layers[0]", "alpha"});
  expectMentions(workloadError(json::parse(R"([{"type": "prelu", "shared_axes": [2]}, {"type": "flatten"}, {"type": "dense", "units": 10}])")),
                 {"model.layers[0].shared_axes", "only leading axes"});
  expectMentions(workloadError(json::parse(R"([{"type": "softmax", "axis": 3}, {"type": "flatten"}, {"type": "dense", "units": 10}])")),
                 {"model.layers[0].axis", "3", "batch"});
  expectMentions(workloadError(json::parse(R"([{"type": "rescaling"}, {"type": "flatten"}, {"type": "dense", "units": 10}])")),
                 {"model.layers[0].scale", "missing"});
  expectMentions(workloadError(json::parse(R"([{"type": "normalization", "mean": [1, 2, 3, 4, 5, 6]}, {"type": "flatten"}, {"type": "dense", "units": 10}])")),
                 {"model.layers[0].variance", "both"});
  expectMentions(workloadError(json::parse(R"([{"type": "normalization", "axis": 1, "mean": [1, 2, 3, 4, 5, 6], "variance": [1, 1, 1, 1, 1, 1]}, {"type": "flatten"}, {"type": "dense", "units": 10}])")),
                 {"model.layers[0].mean", "6", "does not broadcast", "axis 1 of size 4"});
  expectMentions(workloadError(json::parse(R"([{"type": "elu", "alpha": -1}, {"type": "flatten"}, {"type": "dense", "units": 10}])")),
                 {"model.layers[0].alpha", "-1"});
}

// What the layers build: PReLU's alpha a weight of Keras's shape (shared axes
// 1), updated by the optimizer; a softmax mid-model its own op, the output's
// fused with the loss; a Normalization without statistics a warning.
TEST(ActivationLayersReading, TrainingGraph) {
  Workload w = parseWorkload(workloadWith(json::parse(R"([
    {"type": "prelu", "shared_axes": [1], "name": "p"}, {"type": "dense", "units": 6, "activation": "softmax", "name": "d"},
    {"type": "normalization", "name": "n"}, {"type": "flatten"}, {"type": "dense", "units": 10, "activation": "softmax"}])")),
                             "w.json");
  const OpGraph g = buildTrainingGraph(w);
  bool alpha = false;
  for (std::size_t v : g.weights)
    if (g.values[v].name == "p/alpha") alpha = g.values[v].shape == std::vector<std::uint64_t>{1, 6};
  EXPECT_TRUE(alpha);
  std::size_t softmaxes = 0, alphaUpdates = 0;
  for (const Op& op : g.ops) {
    softmaxes += op.kind == OpKind::Softmax;
    alphaUpdates += op.kind == OpKind::MomentumUpdate || op.kind == OpKind::SgdUpdate ? g.values[op.inputs[0]].name == "p/alpha" : 0;
  }
  EXPECT_EQ(softmaxes, 1u);  // d's; the output's is the loss's
  EXPECT_EQ(alphaUpdates, 1u);
  ASSERT_EQ(g.warnings.size(), 1u);
  EXPECT_NE(g.warnings[0].find("layer 'n'"), std::string::npos) << g.warnings[0];
}

}  // namespace
}  // namespace ipusim::scheduler::activation_layers_reading_test
