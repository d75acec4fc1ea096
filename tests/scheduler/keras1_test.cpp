// Keras 1 files (tests/data/keras/make_keras1.py) read in Keras 2's words,
// as Keras 2.0-2.2 converted them (keras/legacy/interfaces.py): the same
// layers as their Keras 2 spelling, and errors naming the key the file wrote.
#include "scheduler/models/keras_model.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

namespace ipusim::scheduler::keras1_test {
namespace {

using nlohmann::json;

std::string src(const std::string& rel) { return std::string(IPUSIM_SOURCE_DIR) + "/" + rel; }
json readJson(const std::string& rel) { return json::parse(std::ifstream(src(rel))); }

std::string errorOf(const json& j) {
  try {
    parseKerasModel(j, "k1.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Keras1, MnistCnnExample) {
  const KerasModel m = loadKerasModel(src("tests/data/keras/mnist_cnn_keras1.json"));
  EXPECT_EQ(m.format, "tf2");
  EXPECT_EQ(m.kerasVersion, "1.2.2");
  EXPECT_EQ(m.inputShape, (std::vector<std::uint64_t>{28, 28, 1}));
  ASSERT_EQ(m.layers.size(), 12u);
  const LayerSpec& conv = m.layers[0];
  EXPECT_EQ(conv.kind, "conv2d");  // Convolution2D
  EXPECT_EQ(conv.units, 32u);      // nb_filter
  EXPECT_EQ(conv.window, (std::array<std::uint32_t, 2>{3, 3}));  // nb_row, nb_col
  EXPECT_EQ(conv.padding, "valid");                               // border_mode
  EXPECT_TRUE(conv.useBias);                                      // bias
  EXPECT_EQ(conv.outputShape, (std::vector<std::uint64_t>{26, 26, 32}));
  EXPECT_EQ(m.layers[4].kind, "max_pooling2d");
  EXPECT_EQ(m.layers[4].outputShape, (std::vector<std::uint64_t>{12, 12, 32}));
  EXPECT_DOUBLE_EQ(m.layers[5].rate, 0.25);  // p
  EXPECT_EQ(m.layers[7].units, 128u);        // output_dim
  EXPECT_EQ(m.layers[6].outputShape, (std::vector<std::uint64_t>{4608}));
  EXPECT_EQ(m.layers[11].activation, Activation::Softmax);
  EXPECT_EQ(m.layers[11].outputShape, (std::vector<std::uint64_t>{10}));
}

TEST(Keras1, Conv1DAndPooling1DKeys) {
  const KerasModel m = loadKerasModel(src("tests/data/keras/conv1d_keras1.json"));
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.layers[0].kind, "conv1d");
  EXPECT_EQ(m.layers[0].units, 8u);                                     // nb_filter
  EXPECT_EQ(m.layers[0].window, (std::array<std::uint32_t, 2>{1, 3}));  // filter_length
  EXPECT_EQ(m.layers[0].padding, "same");                               // border_mode
  EXPECT_EQ(m.layers[0].outputShape, (std::vector<std::uint64_t>{16, 8}));
  EXPECT_EQ(m.layers[1].window, (std::array<std::uint32_t, 2>{1, 2}));  // pool_length
  EXPECT_EQ(m.layers[1].strides, (std::array<std::uint32_t, 2>{1, 2}));  // stride
  EXPECT_EQ(m.layers[1].outputShape, (std::vector<std::uint64_t>{8, 8}));
  EXPECT_EQ(m.layers[3].units, 10u);
}

TEST(Keras1, FunctionalModel) {
  const KerasModel m = loadKerasModel(src("tests/data/keras/functional_keras1.json"));
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.inputShape, (std::vector<std::uint64_t>{8, 8, 2}));
  EXPECT_EQ(m.layers[0].outputShape, (std::vector<std::uint64_t>{8, 8, 4}));
  EXPECT_EQ(m.layers[2].inputs, std::vector<std::size_t>{1});
  EXPECT_EQ(m.layers[2].outputShape, (std::vector<std::uint64_t>{10}));
}

TEST(Keras1Errors, NameTheKeyTheFileWrote) {
  json j = readJson("tests/data/keras/mnist_cnn_keras1.json");
  j["config"][0]["config"]["nb_filter"] = 0;
  EXPECT_EQ(errorOf(j), "k1.json: layer 'convolution2d_1' (Convolution2D): nb_filter: expected a positive integer, got 0");
  j = readJson("tests/data/keras/mnist_cnn_keras1.json");
  j["config"][0]["config"]["border_mode"] = "full";  // Keras 1's third mode, which Keras 2 dropped
  EXPECT_EQ(errorOf(j), "k1.json: layer 'convolution2d_1' (Convolution2D): border_mode: 'full' is not modelled (expected "
                        "'valid' or 'same')");
  j = readJson("tests/data/keras/mnist_cnn_keras1.json");
  j["config"][7]["config"]["W_regularizer"] = {{"name", "WeightRegularizer"}, {"l2", 0.01}};
  EXPECT_EQ(errorOf(j).rfind("k1.json: layer 'dense_1' (Dense): W_regularizer: ", 0), 0u) << errorOf(j);
  j = readJson("tests/data/keras/mnist_cnn_keras1.json");
  j["config"][0]["config"]["dim_ordering"] = "th";
  EXPECT_EQ(errorOf(j), "k1.json: layer 'convolution2d_1' (Convolution2D): dim_ordering: 'th' (Theano's order, channels "
                        "first) is not modelled (channels last: 'tf')");
  j = readJson("tests/data/keras/mnist_cnn_keras1.json");
  j["config"][0]["config"]["filters"] = 32;
  EXPECT_EQ(errorOf(j), "k1.json: layer 'convolution2d_1' (Convolution2D): nb_filter: given with its Keras 2 spelling "
                        "filters too (Keras 2 refuses both; keep filters)");
}

TEST(Keras1, DimOrderingDefaultAndBatchNormalizationMode) {
  json j = readJson("tests/data/keras/mnist_cnn_keras1.json");
  j["config"][4]["config"]["dim_ordering"] = "default";  // None: channels_last
  EXPECT_EQ(parseKerasModel(j, "k1.json").layers[4].outputShape, (std::vector<std::uint64_t>{12, 12, 32}));
  const json bn = {{"class_name", "BatchNormalization"},
                   {"config", {{"name", "bn"}, {"mode", 0}, {"axis", -1}, {"momentum", 0.9}, {"epsilon", 0.001},
                               {"gamma_regularizer", nullptr}, {"beta_regularizer", nullptr}, {"trainable", true}}}};
  j["config"].insert(j["config"].begin() + 2, bn);
  const KerasModel m = parseKerasModel(j, "k1.json");
  EXPECT_EQ(m.layers[2].kind, "batch_normalization");
  EXPECT_DOUBLE_EQ(m.layers[2].momentum, 0.9);
  j["config"][2]["config"]["mode"] = 2;
  EXPECT_EQ(errorOf(j), "k1.json: layer 'bn' (BatchNormalization): mode: 2 is refused (Keras 2 refused "
                        "BatchNormalization's mode 1 and 2: only mode 0, feature-wise, has a Keras 2 meaning)");
}

// Keras 3 never wrote Keras 1's keys: a Keras 3 file with one keeps it unknown.
TEST(Keras1Errors, Keras3FilesAreNotConverted) {
  json j = readJson("workloads/keras/user_guide_logits_keras3.json");
  j["config"]["layers"][1]["config"]["output_dim"] = 256;
  EXPECT_NE(errorOf(j).find("output_dim: 256 is not a key ipusim's importer knows"), std::string::npos) << errorOf(j);
}

// TF 2.13-2.15's files: module keys like Keras 3, Keras 2's meaning.
TEST(KerasFormat, Tf215HybridFilesReadAsKeras2) {
  const KerasModel ecg = loadKerasModel(src("tests/data/keras/public/ecg_conv1d_batchnorm_dotkeras_tf215.json"));
  EXPECT_EQ(ecg.format, "tf2");
  EXPECT_EQ(ecg.stepsPerExecution, 1u);  // compile_config's null: TF 2.x's `steps_per_execution or 1`
  EXPECT_EQ(loadKerasModel(src("workloads/keras/bn_convnet_keras3.json")).format, "keras3");
  EXPECT_EQ(loadKerasModel(src("workloads/keras/resnet20_cifar_keras3.json")).format, "keras3");
  // hard_sigmoid as the Keras 2 that wrote it: clip(0.2 x + 0.5, 0, 1).
  json hybrid = readJson("tests/data/keras/public/ecg_conv1d_batchnorm_dotkeras_tf215.json");
  json& layers = hybrid["config"]["layers"];
  layers[layers.size() - 1]["config"]["activation"] = "hard_sigmoid";
  const KerasModel m = parseKerasModel(hybrid, "h.json");
  EXPECT_DOUBLE_EQ(m.layers.back().activationParams.hardSigmoidSlope, 0.2);
}

}  // namespace
}  // namespace ipusim::scheduler::keras1_test
