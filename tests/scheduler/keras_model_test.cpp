// The Keras importer: model.to_json() files as TF 2.x and Keras 3 write them
// become ipusim's layer list; bad files get one clear error naming the file,
// the layer and the key.
#include "scheduler/models/keras_model.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <stdexcept>

#include <unistd.h>

namespace ipusim::scheduler::keras_model_test {
namespace {

std::string src(const std::string& rel) { return std::string(IPUSIM_SOURCE_DIR) + "/" + rel; }

std::string errorOf(const std::string& path) {
  try {
    loadKerasModel(path);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

void expectMentions(const std::string& message, const std::vector<std::string>& fragments) {
  for (const auto& f : fragments) EXPECT_NE(message.find(f), std::string::npos) << "'" << f << "' not in: " << message;
}

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

TEST(KerasModel, Tf2TutorialMlp) {
  const KerasModel m = loadKerasModel(src("workloads/keras/tutorial_mlp_tf2.json"));
  EXPECT_EQ(m.format, "tf2");
  EXPECT_EQ(m.kerasVersion, "2.4.0");
  EXPECT_EQ(m.inputShape, (std::vector<std::uint64_t>{28, 28}));
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.layers[0].kind, "flatten");
  EXPECT_EQ(m.layers[0].outputShape, std::vector<std::uint64_t>{784});
  EXPECT_EQ(m.layers[1].name, "dense");
  EXPECT_EQ(m.layers[1].units, 128u);
  EXPECT_EQ(m.layers[1].activation, Activation::Relu);
  EXPECT_EQ(m.layers[2].name, "dense_1");
  EXPECT_EQ(m.layers[2].activation, Activation::Softmax);
  EXPECT_FALSE(m.optimizer);  // TF 2.x's to_json has no compile config
  EXPECT_EQ(m.dtype, "float32");
}

TEST(KerasModel, Keras3WithCompileConfig) {
  const KerasModel m = loadKerasModel(src("workloads/keras/user_guide_logits_keras3.json"));
  EXPECT_EQ(m.format, "keras3");
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.layers[1].units, 256u);
  EXPECT_EQ(m.layers[2].units, 128u);
  EXPECT_EQ(m.layers[3].units, 10u);
  EXPECT_EQ(m.layers[3].activation, Activation::Linear);
  ASSERT_TRUE(m.optimizer);
  EXPECT_EQ(m.optimizer->type, "rmsprop");
  EXPECT_NEAR(m.optimizer->learningRate, 0.001, 1e-9);
  EXPECT_DOUBLE_EQ(m.optimizer->rho, 0.9);
  EXPECT_DOUBLE_EQ(m.optimizer->epsilon, 1e-7);
  ASSERT_TRUE(m.loss);
  EXPECT_EQ(m.loss->type, "sparse_categorical_crossentropy");
  EXPECT_TRUE(m.loss->fromLogits);
  EXPECT_EQ(m.stepsPerExecution, 10u);
}

TEST(KerasModel, FunctionalChainReadsAsTheSequentialModel) {
  const KerasModel f = loadKerasModel(src("workloads/keras/tutorial_mlp_functional_keras3.json"));
  const KerasModel s = loadKerasModel(src("workloads/keras/tutorial_mlp_tf2.json"));
  ASSERT_EQ(f.layers.size(), s.layers.size());
  for (std::size_t i = 0; i < f.layers.size(); ++i) {
    EXPECT_EQ(f.layers[i].kind, s.layers[i].kind);
    EXPECT_EQ(f.layers[i].name, s.layers[i].name);
    EXPECT_EQ(f.layers[i].outputShape, s.layers[i].outputShape);
  }
}

TEST(KerasModel, MnistConvnetShapes) {
  const KerasModel m = loadKerasModel(src("workloads/keras/mnist_convnet_tf2.json"));
  ASSERT_EQ(m.layers.size(), 8u);
  const std::vector<std::vector<std::uint64_t>> shapes{{26, 26, 32}, {24, 24, 64}, {12, 12, 64}, {12, 12, 64},
                                                       {9216},       {128},        {128},        {10}};
  for (std::size_t i = 0; i < shapes.size(); ++i) EXPECT_EQ(m.layers[i].outputShape, shapes[i]) << m.layers[i].name;
  EXPECT_EQ(m.layers[0].kind, "conv2d");
  EXPECT_EQ(m.layers[0].window, (std::array<std::uint32_t, 2>{3, 3}));
  EXPECT_EQ(m.layers[2].kind, "max_pooling2d");
  EXPECT_EQ(m.layers[2].strides, (std::array<std::uint32_t, 2>{2, 2}));
  EXPECT_DOUBLE_EQ(m.layers[3].rate, 0.25);
  EXPECT_DOUBLE_EQ(m.layers[6].rate, 0.5);
}

// The convnet's training graph: the images fed as NHWC, both convolutions
// with their kernel gradients, the input gradient of the second only (the
// first layer needs none), the pooling's gradient, the dense layer reading
// the pooled tensor as [batch, 9216].
TEST(KerasModel, ConvnetWorkloadBuildsItsTrainingGraph) {
  const Workload w = loadWorkload(src("workloads/mnist_convnet.json"));
  EXPECT_EQ(w.dataset.inputShape, (std::vector<std::uint64_t>{28, 28, 1}));
  EXPECT_EQ(w.dataset.features, 784u);
  const OpGraph g = buildTrainingGraph(w);
  EXPECT_EQ(g.values[g.images].shape, (std::vector<std::uint64_t>{32, 28, 28, 1}));
  std::map<std::string, int> ops;
  for (const Op& op : g.ops) ++ops[op.layer + "/" + op.name + ":" + toString(op.kind)];
  for (const char* op : {"conv2d/conv2d:Conv2D", "conv2d/kernel_grad:Conv2DWeightGrad", "conv2d/bias_grad:ReduceRows",
                         "conv2d_1/conv2d:Conv2D", "conv2d_1/kernel_grad:Conv2DWeightGrad",
                         "conv2d_1/input_grad:Conv2DInputGrad", "max_pooling2d/max_pool:MaxPool2D",
                         "max_pooling2d/max_pool_grad:MaxPool2DGrad", "dropout/dropout:Dropout", "dense/matmul:MatMul"})
    EXPECT_EQ(ops[op], 1) << op;
  EXPECT_EQ(ops["conv2d/input_grad:Conv2DInputGrad"], 0);
  // Kernels and biases of two conv and two dense layers, each updated.
  EXPECT_EQ(g.weights.size(), 8u);
  EXPECT_EQ(g.values[g.weights[0]].shape, (std::vector<std::uint64_t>{3, 3, 1, 32}));
  EXPECT_EQ(g.values[g.weights[2]].shape, (std::vector<std::uint64_t>{3, 3, 32, 64}));
  EXPECT_EQ(g.values[g.weights[4]].shape, (std::vector<std::uint64_t>{9216, 128}));
}

// A dense layer's output reshaped into an image for a convolution: a
// Reshape op gives the dense output's tensor the image's shape, and the
// gradient its own shape back.
TEST(KerasModel, ConvAfterDenseReadsTheReshapedTensor) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "features": 16, "classes": 10},
    "model": {"layers": [{"type": "dense", "units": 64}, {"type": "reshape", "target_shape": [8, 8, 1]},
                         {"type": "conv2d", "filters": 4, "kernel_size": [3, 3]}, {"type": "flatten"},
                         {"type": "dense", "units": 10, "activation": "softmax"}]}})");
  const Workload w = parseWorkload(j, "dense_conv.json");
  const OpGraph g = buildTrainingGraph(w);
  std::vector<std::string> reshapes;
  for (const Op& op : g.ops)
    if (op.kind == OpKind::Reshape) reshapes.push_back(op.layer + "/" + op.name);
  EXPECT_EQ(reshapes, (std::vector<std::string>{"conv2d/reshape_input", "conv2d/reshape_input_grad"}));
}

// Batch normalization in ipusim's own format builds its training graph:
// gamma and beta are weights (starting at one and zero), the moving mean and
// variance non-trainable state (zero and one), the statistics, the
// normalisation and the gradient through them ops of the layer.
TEST(KerasModel, BatchNormalizationBuildsItsTrainingGraph) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "input_shape": [8, 8, 1], "classes": 10},
    "model": {"layers": [{"type": "conv2d", "filters": 4, "kernel_size": [3, 3]},
                         {"type": "batch_normalization", "momentum": 0.9}, {"type": "flatten"},
                         {"type": "dense", "units": 10, "activation": "softmax"}]}})");
  const OpGraph g = buildTrainingGraph(parseWorkload(j, "bn.json"));
  std::map<std::string, const Value*> values;
  for (const Value& v : g.values) values[v.name] = &v;
  ASSERT_TRUE(values.count("batch_normalization/gamma") && values.count("batch_normalization/beta"));
  EXPECT_EQ(values["batch_normalization/gamma"]->kind, ValueKind::Weight);
  EXPECT_EQ(values["batch_normalization/gamma"]->initialFill, 1.0);
  EXPECT_EQ(values["batch_normalization/beta"]->initialFill, 0.0);
  EXPECT_EQ(values["batch_normalization/moving_mean"]->kind, ValueKind::NonTrainable);
  EXPECT_EQ(values["batch_normalization/moving_variance"]->initialFill, 1.0);
  EXPECT_TRUE(values["batch_normalization/moving_variance"]->alwaysLive());
  EXPECT_EQ(values["batch_normalization/moving_mean"]->shape, std::vector<std::uint64_t>{4});
  std::map<std::string, const Op*> ops;
  for (const Op& op : g.ops)
    if (op.layer == "batch_normalization") ops[op.name] = &op;
  for (const char* name : {"mean", "square", "mean_square", "statistics", "normalise", "beta_grad", "grad_whitened",
                           "gamma_grad", "input_grad", "gamma_update", "beta_update"})
    EXPECT_TRUE(ops.count(name)) << name;
  EXPECT_DOUBLE_EQ(ops["statistics"]->momentum, 0.9);
  EXPECT_DOUBLE_EQ(ops["statistics"]->epsilon, 1e-3);
  EXPECT_DOUBLE_EQ(ops["mean"]->scale, 1.0 / (32 * 6 * 6));  // M: batch (32, the default) x 6 x 6 positions
}

// Keras 3: a convnet of Conv2D (no bias), BatchNormalization (axis -1,
// synchronized false), Activation, MaxPooling2D, with a compile_config.
TEST(KerasModel, Keras3BatchNormalizationConvnet) {
  const KerasModel m = loadKerasModel(src("workloads/keras/bn_convnet_keras3.json"));
  EXPECT_EQ(m.format, "keras3");
  ASSERT_EQ(m.layers.size(), 10u);
  EXPECT_EQ(m.layers[1].kind, "batch_normalization");
  EXPECT_EQ(m.layers[1].name, "batch_normalization");
  EXPECT_DOUBLE_EQ(m.layers[1].momentum, 0.99);
  EXPECT_DOUBLE_EQ(m.layers[1].epsilon, 1e-3);
  EXPECT_TRUE(m.layers[1].center && m.layers[1].scale);
  EXPECT_EQ(m.layers[1].outputShape, (std::vector<std::uint64_t>{28, 28, 16}));
  EXPECT_EQ(m.layers[5].name, "batch_normalization_1");
  EXPECT_EQ(m.layers[5].outputShape, (std::vector<std::uint64_t>{14, 14, 32}));
  ASSERT_TRUE(m.optimizer);
  EXPECT_EQ(m.optimizer->type, "adam");
}

// The bundled workload: the Keras 3 convnet with batch normalization on Fashion-MNIST.
TEST(KerasModel, BundledBatchNormConvnetWorkloadBuildsItsTrainingGraph) {
  const Workload w = loadWorkload(src("workloads/bn_convnet_keras.json"));
  EXPECT_EQ(w.optimizer.type, "adam");  // from its compile_config
  const OpGraph g = buildTrainingGraph(w);
  EXPECT_EQ(g.weights.size(), 8u);  // two conv kernels, two gamma and beta pairs, the dense kernel and bias
  EXPECT_EQ(g.values[g.images].shape, (std::vector<std::uint64_t>{32, 28, 28, 1}));
}

// TF 2.x: BatchNormalization after a Dense stores its axis as [1].
TEST(KerasModel, Tf2BatchNormalizationMlp) {
  const KerasModel m = loadKerasModel(src("workloads/keras/bn_mlp_tf2.json"));
  EXPECT_EQ(m.format, "tf2");
  ASSERT_EQ(m.layers.size(), 5u);
  EXPECT_EQ(m.layers[2].kind, "batch_normalization");
  EXPECT_EQ(m.layers[2].outputShape, std::vector<std::uint64_t>{128});
  nlohmann::json j = {{"model", {{"keras", "keras/bn_mlp_tf2.json"}}}, {"dataset", {{"format", "synthetic"}}}};
  const OpGraph g = buildTrainingGraph(parseWorkload(j, "w.json", src("workloads")));
  EXPECT_EQ(g.weights.size(), 5u);  // dense kernel, gamma, beta, dense_1 kernel and bias
}

// Batch normalization's config values that change the computation and are not modelled.
TEST(KerasModelErrors, BatchNormalizationConfigNotModelled) {
  const std::string file = "workloads/keras/bn_convnet_keras3.json";
  auto layer = [](nlohmann::json& j) -> nlohmann::json& { return j["config"]["layers"][2]["config"]; };
  nlohmann::json j = readJson(src(file));
  layer(j)["axis"] = 1;
  expectMentions(parseError(j), {"model.json", "layer 'batch_normalization' (BatchNormalization)", "axis: 1",
                                 "only the last axis"});
  j = readJson(src(file));
  layer(j)["gamma_initializer"]["class_name"] = "STFTInitializer";
  expectMentions(parseError(j), {"layer 'batch_normalization' (BatchNormalization)", "gamma_initializer", "STFTInitializer",
                                 "not modelled"});
  j = readJson(src(file));
  layer(j)["moving_variance_initializer"] = "zeros";
  expectMentions(parseError(j), {"layer 'batch_normalization' (BatchNormalization)", "moving_variance_initializer",
                                 "zeros"});
  j = readJson(src(file));
  layer(j)["beta_regularizer"] = {{"class_name", "L1"}, {"config", {{"l1", -1}}}};
  expectMentions(parseError(j), {"layer 'batch_normalization' (BatchNormalization)", "beta_regularizer", "l1",
                                 "non-negative"});
  j = readJson(src(file));
  layer(j)["gamma_constraint"] = {{"class_name", "NonNeg"}, {"config", nlohmann::json::object()}};
  expectMentions(parseError(j), {"layer 'batch_normalization' (BatchNormalization)", "gamma_constraint", "NonNeg"});
  j = readJson(src(file));
  layer(j)["synchronized"] = true;
  expectMentions(parseError(j), {"layer 'batch_normalization' (BatchNormalization)", "synchronized", "true"});
  j = readJson(src(file));
  layer(j)["momentum"] = 1.5;
  expectMentions(parseError(j), {"layer 'batch_normalization' (BatchNormalization)", "momentum", "[0, 1]"});
}

TEST(KerasModel, WorkloadTakesTheCompileConfigUnlessItSetsItsOwn) {
  nlohmann::json j = {{"model", {{"keras", "keras/user_guide_logits_keras3.json"}}},
                      {"dataset", {{"format", "synthetic"}}}};
  Workload w = parseWorkload(j, "w.json", src("workloads"));
  EXPECT_EQ(w.optimizer.type, "rmsprop");
  EXPECT_EQ(w.training.stepsPerExecution, 10u);
  EXPECT_EQ(w.dataset.features, 784u);
  j["optimizer"] = {{"type", "adam"}};
  j["training"] = {{"steps_per_execution", 5}, {"steps", 10}};
  w = parseWorkload(j, "w.json", src("workloads"));
  EXPECT_EQ(w.optimizer.type, "adam");
  EXPECT_DOUBLE_EQ(w.optimizer.learningRate, 0.001);  // Keras's Adam default
  EXPECT_EQ(w.training.stepsPerExecution, 5u);
}

// Keras 3's DTypePolicy objects: the model's policy; layers that disagree are refused.
TEST(KerasModel, Keras3DtypePolicy) {
  nlohmann::json j = readJson(src("workloads/keras/user_guide_logits_keras3.json"));
  for (auto& layer : j["config"]["layers"])
    if (layer["class_name"] != "InputLayer") layer["config"]["dtype"]["config"]["name"] = "mixed_float16";
  EXPECT_EQ(parseKerasModel(j, "model.json").dtype, "mixed_float16");
  j["config"]["layers"][2]["config"]["dtype"]["config"]["name"] = "float32";
  expectMentions(parseError(j), {"model.json", "layer 'dense' (Dense)", "dtype", "'float32'", "'mixed_float16'"});
}

TEST(KerasModelErrors, CompileConfigOptionNotModelled) {
  nlohmann::json j = readJson(src("workloads/keras/user_guide_logits_keras3.json"));
  j["compile_config"]["optimizer"]["config"]["use_ema"] = true;
  expectMentions(parseError(j), {"model.json", "compile_config.optimizer (RMSprop)", "use_ema", "true", "not modelled"});
  j = readJson(src("workloads/keras/user_guide_logits_keras3.json"));
  j["compile_config"]["optimizer"] = "adadelta";
  expectMentions(parseError(j), {"compile_config.optimizer", "adadelta", "SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, Nadam"});
  j = readJson(src("workloads/keras/user_guide_logits_keras3.json"));
  j["compile_config"]["loss"]["config"]["ignore_class"] = 0;
  expectMentions(parseError(j), {"compile_config.loss (SparseCategoricalCrossentropy)", "ignore_class"});
}

// A key Keras may add in a later version is refused until someone decides what it means.
TEST(KerasModelErrors, UnknownConfigKeyIsRefused) {
  nlohmann::json j = readJson(src("workloads/keras/tutorial_mlp_tf2.json"));
  j["config"]["layers"][2]["config"]["kernel_quantizer"] = "int8";
  expectMentions(parseError(j), {"layer 'dense' (Dense)", "kernel_quantizer", "\"int8\""});
}

TEST(KerasModelErrors, TruncatedFile) {
  const std::string path = src("tests/data/keras/truncated.json");
  expectMentions(errorOf(path), {path, "not valid JSON", "the file ends early"});
}

TEST(KerasModelErrors, UnknownLayerNamesClassNameAndSupportedClasses) {
  const std::string path = src("tests/data/keras/unknown_layer.json");
  expectMentions(errorOf(path), {path, "layer 'conv_lstm1d' (ConvLSTM1D)", "class_name", "'ConvLSTM1D' is not supported", "Dense", "Conv2D"});
}

// A TF 2.4 file's L2 kernel regularizer (its float32 factor) reaches the
// layer; an OrthogonalRegularizer is refused naming the layer, key and value.
TEST(KerasModel, RegularizerReachesItsLayer) {
  const std::string path = src("tests/data/keras/kernel_regularizer.json");
  const KerasModel m = loadKerasModel(path);
  ASSERT_EQ(m.layers[1].regularizers.count("kernel"), 1u);
  EXPECT_EQ(m.layers[1].regularizers.at("kernel").l2, 0.009999999776482582);
  EXPECT_EQ(m.layers[1].regularizers.at("kernel").l1, 0.0);
  nlohmann::json j = readJson(path);
  j["config"]["layers"][2]["config"]["kernel_regularizer"] = {{"class_name", "OrthogonalRegularizer"},
                                                              {"config", {{"factor", 0.01}, {"mode", "rows"}}}};
  expectMentions(parseError(j), {"model.json", "layer 'dense' (Dense)", "kernel_regularizer", "OrthogonalRegularizer",
                                 "not modelled"});
}

TEST(KerasModelErrors, UnknownActivationNamesLayerKeyAndValue) {
  const std::string path = src("tests/data/keras/unknown_activation.json");
  expectMentions(errorOf(path), {path, "layer 'dense' (Dense)", "activation", "'log_softmax'", "is not modelled",
                                 "gelu", "hard_silu", "mish"});
}

// A dilated Conv2D (dilation_rate [2, 2]) reads: 22x22 out of 3x3 taps 2 apart (a 5x5 window) over 26x26.
TEST(KerasModel, DilatedConvReads) {
  const KerasModel m = loadKerasModel(src("tests/data/keras/dilated_conv.json"));
  ASSERT_GE(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[1].dilation, (std::array<std::uint32_t, 2>{2, 2}));
  EXPECT_EQ(m.layers[1].outputShape, (std::vector<std::uint64_t>{22, 22, 64}));
}

TEST(KerasModelErrors, ShapesThatDoNotChainNameLayerAndKey) {
  const std::string path = src("tests/data/keras/shapes_do_not_chain.json");
  expectMentions(errorOf(path), {path, "layer 'reshape'", "target_shape", "784", "27x27"});
}

// dense_1 reads flatten, so dense's output leads nowhere.
TEST(KerasModelErrors, FunctionalLayerThatLeadsNowhere) {
  const std::string path = src("tests/data/keras/functional_not_a_chain.json");
  expectMentions(errorOf(path), {path, "layer 'dense' (Dense)", "does not lead to the model's output", "'dense_1'"});
}

// A residual convnet (tests/data/keras/make_residual_convnet.py writes it in
// both formats): the same graph of layer calls from either.
TEST(KerasModel, ResidualConvnetReadsAsOneGraphFromEitherFormat) {
  const KerasModel tf2 = loadKerasModel(src("tests/data/keras/residual_convnet_tf2.json"));
  const KerasModel k3 = loadKerasModel(src("tests/data/keras/residual_convnet_keras3.json"));
  ASSERT_EQ(tf2.layers.size(), 14u);
  ASSERT_EQ(k3.layers.size(), tf2.layers.size());
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < tf2.layers.size(); ++i) {
    const LayerSpec& a = tf2.layers[i];
    const LayerSpec& b = k3.layers[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.inputs, b.inputs) << a.name;
    EXPECT_EQ(a.outputShape, b.outputShape) << a.name;
    for (std::size_t in : a.inputs) EXPECT_TRUE(in == kModelInput || in < i) << a.name << " reads a later layer";
    at[a.name] = i;
  }
  const LayerSpec& add = tf2.layers[at.at("add")];
  EXPECT_EQ(add.kind, layer_kind::kAdd);
  EXPECT_EQ(add.inputs, (std::vector<std::size_t>{at.at("conv2d_2"), at.at("activation")}));
  EXPECT_EQ(tf2.layers[at.at("conv2d")].inputs, std::vector<std::size_t>{kModelInput});
  EXPECT_EQ(tf2.layers[at.at("conv2d_4")].inputs, std::vector<std::size_t>{at.at("activation_1")});
  EXPECT_EQ(tf2.layers[at.at("concatenate")].outputShape, std::vector<std::uint64_t>{32});
  EXPECT_EQ(tf2.layers[at.at("global_average_pooling2d")].outputShape, std::vector<std::uint64_t>{16});
  EXPECT_EQ(tf2.layers.back().name, "dense");  // the output last
}

// The residual convnet's file with one layer's inbound node changed by `edit`.
std::string residualError(const std::function<void(nlohmann::json& layers)>& edit) {
  nlohmann::json j = readJson(src("tests/data/keras/residual_convnet_tf2.json"));
  edit(j["config"]["layers"]);
  return parseError(j);
}

nlohmann::json& layerNamed(nlohmann::json& layers, const std::string& name) {
  for (auto& l : layers)
    if (l["name"] == name) return l;
  throw std::logic_error("no layer " + name);
}

TEST(KerasModelErrors, CycleInInboundNodesNamesItsLayers) {
  const std::string e = residualError([](nlohmann::json& layers) {
    layerNamed(layers, "conv2d_1")["inbound_nodes"] = nlohmann::json::parse(R"([[["conv2d_2", 0, 0, {}]]])");
  });
  expectMentions(e, {"model.json", "inbound_nodes", "cycle", "'conv2d_1'", "'conv2d_2'"});
}

TEST(KerasModelErrors, InputThatNamesNoLayer) {
  const std::string e = residualError([](nlohmann::json& layers) {
    layerNamed(layers, "add")["inbound_nodes"] = nlohmann::json::parse(R"([[["conv2d_2", 0, 0, {}], ["conv_9", 0, 0, {}]]])");
  });
  expectMentions(e, {"model.json", "layer 'add' (Add)", "inbound_nodes", "'conv_9' names no layer"});
}

TEST(KerasModelErrors, ShapesThatDoNotMerge) {
  const std::string e = residualError([](nlohmann::json& layers) {
    layerNamed(layers, "add")["inbound_nodes"] = nlohmann::json::parse(R"([[["conv2d_2", 0, 0, {}], ["input_1", 0, 0, {}]]])");
  });
  expectMentions(e, {"model.json", "layer 'add'", "do not merge", "8x8x8, 8x8x1"});
}

TEST(KerasModelErrors, ConcatenateAxisOutOfRange) {
  const std::string e = residualError([](nlohmann::json& layers) { layerNamed(layers, "concatenate")["config"]["axis"] = 2; });
  expectMentions(e, {"model.json", "layer 'concatenate'", "axis", "2 is not an axis"});
}

TEST(KerasModelErrors, ReadingACallALayerDoesNotHave) {
  const std::string e = residualError([](nlohmann::json& layers) {
    layerNamed(layers, "add")["inbound_nodes"] = nlohmann::json::parse(R"([[["conv2d_2", 1, 0, {}], ["activation", 0, 0, {}]]])");
  });
  expectMentions(e, {"model.json", "layer 'add' (Add)", "inbound_nodes", "call 1 of layer 'conv2d_2'", "called 1 time"});
}

TEST(KerasModelErrors, WorkloadNamesItsKeyAndTheKerasFile) {
  nlohmann::json j = {{"model", {{"keras", "no/such/model.json"}}}};
  try {
    parseWorkload(j, "w.json");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    expectMentions(e.what(), {"w.json", "model.keras", "no/such/model.json"});
  }
}

// A layer config nested 200,000 deep (a 400 kB file) is refused by its
// depth before it is parsed: nlohmann::json parses it but copies it
// recursively, which overflowed the stack.
TEST(KerasModelErrors, DeeplyNestedConfigIsRefusedByItsDepth) {
  const std::string path = (std::filesystem::temp_directory_path() / ("ipusim_deep_keras_" + std::to_string(::getpid()) + ".json")).string();
  {
    std::ofstream f(path);
    f << R"({"class_name": "Sequential", "config": {"layers": [{"class_name": "Dense", "config": {"units": )";
    for (int i = 0; i < 200000; ++i) f << '[';
    for (int i = 0; i < 200000; ++i) f << ']';
    f << "}}]}}";
  }
  const std::string e = errorOf(path);
  std::filesystem::remove(path);
  expectMentions(e, {path, "nests arrays and objects more than 256 deep"});
}

}  // namespace
}  // namespace ipusim::scheduler::keras_model_test
