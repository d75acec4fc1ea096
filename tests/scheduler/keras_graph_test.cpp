// The functional graph of a Keras file beyond plain layer calls
// (scheduler/models/keras_graph.hpp): a nested Sequential model inlined, a
// layer called twice sharing its weights, TF op nodes (TF 2.x TFOpLambda and
// TensorFlowOpLayer, Keras 3 keras.src.ops.numpy operations) read as the
// merges and scalings they compute; a TF op that is none of them is refused
// by name.
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

namespace ipusim::scheduler::keras_graph_test {
namespace {

std::string src(const std::string& rel) { return std::string(IPUSIM_SOURCE_DIR) + "/" + rel; }

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::string parseError(const nlohmann::json& j) {
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

// A training workload over the Keras file `path` (8x8x1 synthetic images, 10 classes).
Workload workloadOver(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8, 8, 1], "classes": 10, "examples": 16},
    "training": {"steps": 10}, "optimizer": {"type": "sgd", "learning_rate": 0.05}, "ipu": {"arch": "ipu2", "tiles": 16}})");
  j["model"] = {{"keras", path}};
  return parseWorkload(j, "graph.json");
}

const LayerSpec& named(const KerasModel& m, const std::string& name) {
  for (const auto& l : m.layers)
    if (l.name == name) return l;
  throw std::logic_error("no layer " + name);
}

std::size_t indexOf(const KerasModel& m, const std::string& name) { return std::size_t(&named(m, name) - m.layers.data()); }

void expectGraphFeatures(const std::string& file, const std::string& addName, const std::string& mulName) {
  const KerasModel m = loadKerasModel(src("tests/data/keras/" + file));
  // The nested Sequential's layers inlined (its InputLayer dropped), reading the model's input.
  EXPECT_EQ(named(m, "conv_a").kind, layer_kind::kConv2D);
  EXPECT_EQ(named(m, "conv_a").inputs, (std::vector<std::size_t>{kModelInput}));
  EXPECT_EQ(named(m, "bn_a").inputs, (std::vector<std::size_t>{indexOf(m, "conv_a")}));
  // The shared convolution's second call reads its first and shares its weights.
  EXPECT_EQ(named(m, "shared_conv").inputs, (std::vector<std::size_t>{indexOf(m, "bn_a")}));
  EXPECT_EQ(named(m, "shared_conv").weightsOf, "");
  EXPECT_EQ(named(m, "shared_conv@1").weightsOf, "shared_conv");
  EXPECT_EQ(named(m, "shared_conv@1").inputs, (std::vector<std::size_t>{indexOf(m, "shared_conv")}));
  // The TF ops: x + y of both calls, then times the nested model's output.
  EXPECT_EQ(named(m, addName).kind, layer_kind::kAdd);
  EXPECT_EQ(named(m, addName).inputs, (std::vector<std::size_t>{indexOf(m, "shared_conv"), indexOf(m, "shared_conv@1")}));
  EXPECT_EQ(named(m, mulName).kind, layer_kind::kMultiply);
  EXPECT_EQ(named(m, mulName).inputs, (std::vector<std::size_t>{indexOf(m, addName), indexOf(m, "bn_a")}));
  EXPECT_EQ(m.layers.back().name, "dense");

  // The training graph holds one kernel for both calls, its gradient the sum of theirs.
  const OpGraph g = buildTrainingGraph(workloadOver(src("tests/data/keras/" + file)));
  std::size_t kernels = 0, kernelSums = 0, biasSums = 0;
  for (std::size_t v : g.weights) kernels += g.values[v].name == "shared_conv/kernel";
  for (const Op& op : g.ops) {
    kernelSums += op.kind == OpKind::Add && g.values[op.outputs[0]].name == "shared_conv/kernel_grad_sum";
    biasSums += op.kind == OpKind::Add && g.values[op.outputs[0]].name == "shared_conv/bias_grad_sum";
  }
  EXPECT_EQ(kernels, 1u);
  EXPECT_EQ(kernelSums, 1u);
  EXPECT_EQ(biasSums, 1u);
}

TEST(KerasGraph, Tf2NestedSharedAndTfOps) { expectGraphFeatures("graph_features_tf2.json", "tf.__operators__.add", "tf.math.multiply"); }
TEST(KerasGraph, Keras3NestedSharedAndOps) { expectGraphFeatures("graph_features_keras3.json", "add", "multiply"); }

nlohmann::json& layerNamed(nlohmann::json& layers, const std::string& name) {
  for (auto& l : layers)
    if (l["name"] == name) return l;
  throw std::logic_error("no layer " + name);
}

TEST(KerasGraphErrors, TfOpThatIsNoElementwiseMergeIsRefusedByName) {
  nlohmann::json j = readJson(src("tests/data/keras/graph_features_tf2.json"));
  layerNamed(j["config"]["layers"], "tf.math.multiply")["config"]["function"] = "math.reduce_mean";
  expectMentions(parseError(j), {"model.json", "layer 'tf.math.multiply' (TFOpLambda)", "TF op 'math.reduce_mean'",
                                 "not an elementwise merge or scaling", "math.multiply"});
}

TEST(KerasGraphErrors, Keras3OpThatIsNoElementwiseMergeIsRefusedByName) {
  nlohmann::json j = readJson(src("tests/data/keras/graph_features_keras3.json"));
  auto& op = layerNamed(j["config"]["layers"], "multiply");
  op["class_name"] = "Matmul";
  expectMentions(parseError(j), {"model.json", "layer 'multiply' (Matmul)", "TF op 'Matmul'", "not an elementwise merge"});
}

TEST(KerasGraphErrors, TensorFlowOpLayerByItsNodeDef) {
  // TF 2.2-2.3 wrote x + y as a TensorFlowOpLayer whose node_def names the op.
  nlohmann::json j = readJson(src("tests/data/keras/graph_features_tf2.json"));
  auto& op = layerNamed(j["config"]["layers"], "tf.__operators__.add");
  op["class_name"] = "TensorFlowOpLayer";
  op["config"] = {{"name", "AddV2"}, {"trainable", true}, {"dtype", "float32"},
                  {"node_def", {{"name", "AddV2"}, {"op", "AddV2"}, {"input", {"a", "b"}}, {"attr", nlohmann::json::object()}}},
                  {"constants", nlohmann::json::object()}};
  op["inbound_nodes"] = nlohmann::json::parse(R"([[["shared_conv", 0, 0, {}], ["shared_conv", 1, 0, {}]]])");
  const KerasModel m = parseKerasModel(j, "model.json");
  EXPECT_EQ(named(m, "tf.__operators__.add").kind, layer_kind::kAdd);
  op["config"]["node_def"]["op"] = "MatMul";
  expectMentions(parseError(j), {"model.json", "(TensorFlowOpLayer)", "TF op 'MatMul'", "not an elementwise merge"});
}

TEST(KerasGraphErrors, QuotientOfTwoTensorsIsRefused) {
  nlohmann::json j = readJson(src("tests/data/keras/graph_features_tf2.json"));
  layerNamed(j["config"]["layers"], "tf.math.multiply")["config"]["function"] = "math.truediv";
  expectMentions(parseError(j), {"model.json", "'math.truediv'", "quotient of two tensors"});
}

TEST(KerasGraphErrors, ANestedModelsLayerClashingWithAnOuterName) {
  nlohmann::json j = readJson(src("tests/data/keras/graph_features_tf2.json"));
  layerNamed(j["config"]["layers"], "block")["config"]["layers"][1]["config"]["name"] = "dense";
  expectMentions(parseError(j), {"model.json", "dense"});
}

TEST(KerasGraphErrors, SharedCallsWhoseShapesDifferNameTheLayer) {
  // The shared convolution's second call reading the 1-channel input: its
  // kernel would be 3x3x1x4 against the first call's 3x3x4x4.
  nlohmann::json j = readJson(src("tests/data/keras/graph_features_tf2.json"));
  layerNamed(j["config"]["layers"], "shared_conv")["inbound_nodes"][1] = nlohmann::json::parse(R"([["input_1", 0, 0, {}]])");
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ipusim_shared_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << j.dump();
  std::string e = "(no error)";
  try {
    buildTrainingGraph(workloadOver(path));
  } catch (const std::invalid_argument& x) {
    e = x.what();
  }
  std::filesystem::remove(path);
  expectMentions(e, {path + ": layer 'shared_conv@1'", "'shared_conv'", "3x3x1x4", "3x3x4x4"});  // the Keras file's layer
}

// The 1-D pooling classes as Keras 3 writes them (pool_size and strides as lists of one).
TEST(KerasGraph, OneDimensionalPoolingClasses) {
  const nlohmann::json j = nlohmann::json::parse(R"({"class_name": "Sequential", "config": {"name": "seq", "layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [null, 16, 4], "dtype": "float32", "name": "in"}},
    {"class_name": "MaxPooling1D", "config": {"name": "mp", "pool_size": [2], "strides": [2], "padding": "valid", "data_format": "channels_last"}},
    {"class_name": "AveragePooling1D", "config": {"name": "ap", "pool_size": [3], "strides": [1], "padding": "same", "data_format": "channels_last"}},
    {"class_name": "GlobalMaxPooling1D", "config": {"name": "gmp", "data_format": "channels_last", "keepdims": true}},
    {"class_name": "GlobalAveragePooling1D", "config": {"name": "gap", "data_format": "channels_last", "keepdims": false}},
    {"class_name": "Dense", "config": {"name": "d", "units": 3}}]}})");
  const KerasModel m = parseKerasModel(j, "model.json");
  EXPECT_EQ(named(m, "mp").outputShape, (std::vector<std::uint64_t>{8, 4}));
  EXPECT_EQ(named(m, "ap").outputShape, (std::vector<std::uint64_t>{8, 4}));
  EXPECT_EQ(named(m, "gmp").outputShape, (std::vector<std::uint64_t>{1, 4}));
  EXPECT_EQ(named(m, "gap").outputShape, (std::vector<std::uint64_t>{4}));
  nlohmann::json bad = j;
  bad["config"]["layers"][1]["config"]["pool_size"] = nlohmann::json::array({2, 2});
  expectMentions(parseError(bad), {"model.json", "layer 'mp' (MaxPooling1D)", "pool_size", "a list of one", "[2,2]"});
}

// keras.applications models built without their top leave the image size
// unknown ([null, null, null, 3]): the workload's dataset.input_shape gives it.
TEST(KerasGraph, InputSizesLeftUnknownComeFromTheDataset) {
  nlohmann::json j = readJson(src("tests/data/keras/residual_convnet_tf2.json"));
  j["config"]["layers"][0]["config"]["batch_input_shape"] = nlohmann::json::parse("[null, null, null, 1]");
  const KerasModel m = parseKerasModel(j, "model.json");
  EXPECT_EQ(m.inputShape, (std::vector<std::uint64_t>{0, 0, 1}));
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ipusim_unknown_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << j.dump();
  const Workload w = workloadOver(path);  // input_shape [8, 8, 1]
  EXPECT_EQ(w.dataset.inputShape, (std::vector<std::uint64_t>{8, 8, 1}));
  EXPECT_EQ(w.layers.back().outputShape, (std::vector<std::uint64_t>{10}));
  nlohmann::json bare = {{"dataset", {{"format", "synthetic"}, {"classes", 10}}}, {"model", {{"keras", path}}}};
  std::string e = "(no error)";
  try {
    parseWorkload(bare, "bare.json");
  } catch (const std::invalid_argument& x) {
    e = x.what();
  }
  nlohmann::json wrong = bare;
  wrong["dataset"]["input_shape"] = {8, 8, 3};
  std::string e2 = "(no error)";
  try {
    parseWorkload(wrong, "wrong.json");
  } catch (const std::invalid_argument& x) {
    e2 = x.what();
  }
  std::filesystem::remove(path);
  expectMentions(e, {"bare.json", "dataset.input_shape", "missing", "?x?x1", "sizes left unknown"});
  expectMentions(e2, {"wrong.json", "dataset.input_shape", "8x8x3", "differs from the Keras model's input ?x?x1"});
}

// Keras 2.0-2.2 wrote a Sequential model's config as the bare list of its layers.
TEST(KerasGraph, Keras2SequentialConfigAsABareList) {
  const nlohmann::json j = nlohmann::json::parse(R"({"class_name": "Sequential", "keras_version": "2.1.6",
    "backend": "tensorflow", "config": [
    {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "batch_input_shape": [null, 784],
     "dtype": "float32", "units": 64, "activation": "relu", "use_bias": true,
     "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}},
     "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null,
     "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}},
    {"class_name": "Dense", "config": {"name": "dense_2", "trainable": true, "units": 10, "activation": "softmax",
     "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}},
     "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null,
     "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}]})");
  const KerasModel m = parseKerasModel(j, "model.json");
  EXPECT_EQ(m.inputShape, (std::vector<std::uint64_t>{784}));
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].name, "dense_1");
  EXPECT_EQ(m.layers[1].inputs, (std::vector<std::size_t>{0}));
  EXPECT_EQ(m.layers.back().outputShape, (std::vector<std::uint64_t>{10}));
  // Keras 2.0-2.2 wrote Glorot uniform as VarianceScaling(1, fan_avg, uniform): the same draw.
  nlohmann::json k2 = j;
  k2["config"][0]["config"]["kernel_initializer"] = nlohmann::json::parse(
      R"({"class_name": "VarianceScaling", "config": {"scale": 1.0, "mode": "fan_avg", "distribution": "uniform", "seed": null}})");
  EXPECT_EQ(parseKerasModel(k2, "model.json").layers.size(), 2u);
  EXPECT_TRUE(parseKerasModel(k2, "model.json").layers[0].initializers.empty());  // the layer's default draw
  k2["config"][0]["config"]["kernel_initializer"]["config"]["mode"] = "fan_in";  // LeCun uniform: another draw
  EXPECT_EQ(parseKerasModel(k2, "model.json").layers[0].initializers.at("kernel").mode, "fan_in");
  k2["config"][0]["config"]["kernel_initializer"]["config"]["mode"] = "fan_sum";
  expectMentions(parseError(k2), {"model.json", "layer 'dense_1' (Dense)", "kernel_initializer", "mode: 'fan_sum'"});
}

// The bundled image classifiers read as keras.applications builds them.
TEST(KerasGraph, BundledImageClassifiers) {
  const KerasModel resnet = loadKerasModel(src("workloads/keras/resnet50_keras3.json"));
  EXPECT_EQ(resnet.inputShape, (std::vector<std::uint64_t>{224, 224, 3}));
  EXPECT_EQ(named(resnet, "conv5_block3_out").outputShape, (std::vector<std::uint64_t>{7, 7, 2048}));
  EXPECT_EQ(resnet.layers.back().outputShape, (std::vector<std::uint64_t>{1000}));
  const KerasModel mobile = loadKerasModel(src("workloads/keras/mobilenet_v2_keras3.json"));
  EXPECT_EQ(named(mobile, "block_1_pad").outputShape, (std::vector<std::uint64_t>{113, 113, 96}));
  EXPECT_EQ(named(mobile, "block_1_depthwise").outputShape, (std::vector<std::uint64_t>{56, 56, 96}));
  EXPECT_EQ(named(mobile, "block_16_project_BN").outputShape, (std::vector<std::uint64_t>{7, 7, 320}));
  EXPECT_EQ(named(mobile, "block_16_depthwise").kind, "depthwise_conv2d");
  EXPECT_EQ(mobile.layers.back().outputShape, (std::vector<std::uint64_t>{1000}));
  std::size_t adds = 0;
  for (const auto& l : mobile.layers) adds += l.kind == layer_kind::kAdd;
  EXPECT_EQ(adds, 10u);  // the stride-1 blocks whose channels do not change
}

}  // namespace
}  // namespace ipusim::scheduler::keras_graph_test
