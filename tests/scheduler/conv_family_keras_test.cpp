// The convolution family read from Keras files (both formats) and from
// ipusim's workload format: the same layers from either Keras format, every
// key used or checked, and one clear error naming the file, the layer and
// the key for what is not modelled or does not fit (groups not dividing the
// channels, causal padding on a 2-D convolution, strides with dilation,
// output_padding not below the strides, initializers and regularizers).
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace ipusim::scheduler::conv_family_keras_test {
namespace {

std::string src(const std::string& rel) { return std::string(IPUSIM_SOURCE_DIR) + "/" + rel; }

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void expectMentions(const std::string& message, const std::vector<std::string>& fragments) {
  for (const auto& f : fragments) EXPECT_NE(message.find(f), std::string::npos) << "'" << f << "' not in: " << message;
}

std::string kerasError(const nlohmann::json& j) {
  try {
    parseKerasModel(j, "model.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

std::string workloadError(const nlohmann::json& j) {
  try {
    parseWorkload(j, "w.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

nlohmann::json& layerNamed(nlohmann::json& model, const std::string& name) {
  for (auto& l : model["config"]["layers"])
    if (l["config"]["name"] == name) return l["config"];
  throw std::logic_error("no layer " + name);
}

const LayerSpec& specNamed(const KerasModel& m, const std::string& name) {
  for (const LayerSpec& l : m.layers)
    if (l.name == name) return l;
  throw std::logic_error("no layer " + name);
}

TEST(ConvFamilyKeras, BothFormatsReadAsTheSameLayers) {
  const KerasModel tf2 = loadKerasModel(src("tests/data/keras/conv_family_tf2.json"));
  const KerasModel k3 = loadKerasModel(src("tests/data/keras/conv_family_keras3.json"));
  ASSERT_EQ(tf2.layers.size(), k3.layers.size());
  for (std::size_t i = 0; i < tf2.layers.size(); ++i) {
    EXPECT_EQ(tf2.layers[i].kind, k3.layers[i].kind) << i;
    EXPECT_EQ(tf2.layers[i].outputShape, k3.layers[i].outputShape) << tf2.layers[i].name;
  }
  using S = std::vector<std::uint64_t>;
  const LayerSpec& dw = specNamed(k3, "dw");
  EXPECT_EQ(dw.kind, "depthwise_conv2d");
  EXPECT_EQ(dw.units, 8u);  // channels x depth_multiplier
  EXPECT_FALSE(dw.useBias);
  const LayerSpec& sep = specNamed(k3, "sep");
  EXPECT_EQ(sep.kind, "separable_conv2d");
  EXPECT_EQ(sep.depthMultiplier, 2u);
  const LayerSpec& grouped = specNamed(k3, "grouped");
  EXPECT_EQ(grouped.groups, 4u);
  EXPECT_EQ(grouped.dilation, (std::array<std::uint32_t, 2>{2, 2}));
  EXPECT_EQ(specNamed(k3, "up").outputShape, (S{8, 8, 4}));
  const LayerSpec& c1 = specNamed(k3, "c1");
  EXPECT_EQ(c1.kind, "conv1d");
  EXPECT_EQ(c1.padding, "causal");
  EXPECT_EQ(c1.window, (std::array<std::uint32_t, 2>{1, 3}));
  EXPECT_EQ(c1.dilation, (std::array<std::uint32_t, 2>{1, 2}));
  EXPECT_EQ(c1.outputShape, (S{16, 6}));
  EXPECT_EQ(specNamed(k3, "dw1").outputShape, (S{16, 12}));
  EXPECT_EQ(specNamed(k3, "sep1").outputShape, (S{14, 6}));
  EXPECT_EQ(specNamed(tf2, "up1").outputShape, (S{29, 4}));  // (14 - 1) 2 + 2 + output_padding 1
  EXPECT_EQ(specNamed(tf2, "up1").outputPadding, (std::array<std::uint32_t, 2>{0, 1}));
}

// Keras's fans for each kernel shape (compute_fans): the Glorot limits the
// kernels are drawn with.
TEST(ConvFamilyKeras, KernelsAreGlorotUniformWithKerasFans) {
  nlohmann::json j = nlohmann::json::parse(R"({"dataset": {"format": "synthetic", "input_shape": [8, 8, 3], "classes": 10}})");
  j["model"] = {{"keras", src("tests/data/keras/conv_family_keras3.json")}};
  const OpGraph g = buildTrainingGraph(parseWorkload(j, "w.json"));
  auto limit = [&](const std::string& name) {
    for (const Value& v : g.values)
      if (v.name == name && v.drawnInit) return v.drawnInit->limit;
    throw std::logic_error("no kernel " + name);
  };
  auto glorot = [](double fanIn, double fanOut) { return std::sqrt(6.0 / (fanIn + fanOut)); };
  EXPECT_DOUBLE_EQ(limit("dw/kernel"), glorot(9 * 8, 9 * 1));                  // [3, 3, 8, 1]
  EXPECT_DOUBLE_EQ(limit("sep/depthwise_kernel"), glorot(9 * 8, 9 * 2));        // [3, 3, 8, 2]
  EXPECT_DOUBLE_EQ(limit("sep/pointwise_kernel"), glorot(16, 8));               // [1, 1, 16, 8]
  EXPECT_DOUBLE_EQ(limit("grouped/kernel"), glorot(9 * 2, 9 * 8));              // [3, 3, 2, 8]: 4 groups
  EXPECT_DOUBLE_EQ(limit("up/kernel"), glorot(9 * 4, 9 * 8));                   // [3, 3, 4, 8]: filters, channels
  EXPECT_DOUBLE_EQ(limit("c1/kernel"), glorot(3 * 16, 3 * 6));                  // [3, 16, 6]
  EXPECT_DOUBLE_EQ(limit("up1/kernel"), glorot(2 * 4, 2 * 6));                  // [2, 4, 6]
}

TEST(ConvFamilyKeras, ErrorsNameTheLayerAndTheKey) {
  const nlohmann::json base = readJson(src("tests/data/keras/conv_family_keras3.json"));
  auto with = [&](const std::string& layer, const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = base;
    layerNamed(j, layer)[key] = value;
    return kerasError(j);
  };
  expectMentions(with("grouped", "groups", 3), {"model.json", "layer 'grouped' (Conv2D)", "groups", "3 does not divide", "8 channels"});
  expectMentions(with("stem", "padding", "causal"), {"layer 'stem' (Conv2D)", "padding", "'causal' is not modelled", "'valid' or 'same'"});
  {
    nlohmann::json j = base;
    layerNamed(j, "c1")["strides"] = {2};
    expectMentions(kerasError(j), {"layer 'c1' (Conv1D)", "dilation_rate", "strides > 1 together with dilation_rate > 1"});
  }
  expectMentions(with("up1", "output_padding", {2}), {"layer 'up1' (Conv1DTranspose)", "output_padding", "not less than the stride 2"});
  expectMentions(with("dw", "depthwise_initializer", {{"class_name", "STFTInitializer"}, {"config", {{"side", "real"}}}}),
                 {"layer 'dw' (DepthwiseConv2D)", "depthwise_initializer", "STFTInitializer", "not modelled"});
  expectMentions(with("sep", "pointwise_regularizer", {{"class_name", "OrthogonalRegularizer"}, {"config", {{"factor", 0.01}, {"mode", "rows"}}}}),
                 {"layer 'sep' (SeparableConv2D)", "pointwise_regularizer", "OrthogonalRegularizer", "not modelled"});
  expectMentions(with("dw", "filters", 8), {"layer 'dw' (DepthwiseConv2D)", "filters", "depth_multiplier"});
  expectMentions(with("dw", "depth_multiplier", 0), {"layer 'dw' (DepthwiseConv2D)", "depth_multiplier", "positive integer"});
  expectMentions(with("c1", "kernel_size", {3, 3}), {"layer 'c1' (Conv1D)", "kernel_size", "[steps]"});
  expectMentions(with("up", "groups", 2), {"layer 'up' (Conv2DTranspose)", "groups", "only 1"});
  expectMentions(with("sep1", "data_format", "channels_first"), {"layer 'sep1' (SeparableConv1D)", "data_format"});
}

// ipusim's own format: the same checks, naming the key path.
TEST(ConvFamilyKeras, WorkloadKeysAreChecked) {
  auto job = [](const char* layers) {
    nlohmann::json j = nlohmann::json::parse(R"({"dataset": {"format": "synthetic", "input_shape": [8, 8, 4], "classes": 10}})");
    j["model"]["layers"] = nlohmann::json::parse(layers);
    return j;
  };
  expectMentions(workloadError(job(R"([{"type": "conv2d", "filters": 4, "kernel_size": 3, "padding": "causal"}])")),
                 {"w.json", "model.layers[0].padding", "causal"});
  expectMentions(workloadError(job(R"([{"type": "conv2d", "filters": 6, "kernel_size": 3, "groups": 3}])")),
                 {"w.json", "model.layers[0]", "groups", "does not divide the input's 4 channels"});
  expectMentions(workloadError(job(R"([{"type": "conv2d", "filters": 6, "kernel_size": 3, "groups": 4}])")),
                 {"groups", "does not divide the 6 filters"});
  expectMentions(workloadError(job(R"([{"type": "depthwise_conv2d", "kernel_size": 3, "filters": 4}])")),
                 {"model.layers[0].filters"});
  expectMentions(workloadError(job(R"([{"type": "conv1d", "filters": 4, "kernel_size": 3}])")),
                 {"model.layers[0]", "steps x channels", "8x8x4"});
  expectMentions(workloadError(job(R"([{"type": "conv2d_transpose", "filters": 4, "kernel_size": 3, "strides": 2,
                                        "output_padding": 2}])")),
                 {"model.layers[0].output_padding", "not less than the stride 2"});
  expectMentions(workloadError(job(R"([{"type": "separable_conv2d", "filters": 4, "kernel_size": 3, "strides": 2,
                                        "dilation_rate": 2}])")),
                 {"model.layers[0].dilation_rate", "strides > 1 together with dilation_rate > 1"});
  expectMentions(workloadError(job(R"([{"type": "conv2d", "filters": 4, "kernel_size": 5, "dilation_rate": 2}])")),
                 {"model.layers[0].kernel_size", "dilated by [2, 2]", "larger than its 8x8x4 input"});
}

}  // namespace
}  // namespace ipusim::scheduler::conv_family_keras_test
