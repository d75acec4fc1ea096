// Reading the layers that only move elements (UpSampling1D, UpSampling2D,
// Permute): Keras files in both formats, ipusim's workload keys and Keras's
// defaults, one clear error per value not modelled naming the file, the
// layer, the key and the value; the ops they build in the training graph.
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace ipusim::scheduler::reshaping_layers_reading_test {
namespace {

using json = nlohmann::json;
using S = std::vector<std::uint64_t>;

std::string src(const std::string& rel) { return std::string(IPUSIM_SOURCE_DIR) + "/" + rel; }

json readJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

void expectMentions(const std::string& message, const std::vector<std::string>& fragments) {
  for (const auto& f : fragments) EXPECT_NE(message.find(f), std::string::npos) << "'" << f << "' not in: " << message;
}

template <class Parse>
std::string errorOf(const Parse& parse) {
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

json& layerNamed(json& model, const std::string& name) {
  for (auto& l : model["config"]["layers"])
    if (l["config"]["name"] == name) return l["config"];
  throw std::logic_error("no layer " + name);
}

const LayerSpec& specNamed(const std::vector<LayerSpec>& layers, const std::string& name) {
  for (const LayerSpec& l : layers)
    if (l.name == name) return l;
  throw std::logic_error("no layer " + name);
}

// A workload over an 8x8x2 image (or `shape`) with `layers` before a softmax dense layer.
json workload(json layers, const json& shape = {8, 8, 2}) {
  layers.push_back({{"type", "flatten"}});
  layers.push_back({{"type", "dense"}, {"units", 10}, {"activation", "softmax"}});
  return {{"dataset", {{"format", "synthetic"}, {"batch_size", 4}, {"classes", 10}, {"examples", 8}, {"input_shape", shape}}},
          {"model", {{"layers", layers}}}};
}

TEST(ReshapingLayersReading, BothKerasFormatsReadAsTheSameLayers) {
  const KerasModel tf2 = loadKerasModel(src("tests/data/keras/reshaping_layers_tf2.json"));
  const KerasModel k3 = loadKerasModel(src("tests/data/keras/reshaping_layers_keras3.json"));
  ASSERT_EQ(tf2.layers.size(), k3.layers.size());
  for (std::size_t i = 0; i < tf2.layers.size(); ++i) {
    EXPECT_EQ(tf2.layers[i].kind, k3.layers[i].kind) << i;
    EXPECT_EQ(tf2.layers[i].outputShape, k3.layers[i].outputShape) << tf2.layers[i].name;
  }
  EXPECT_EQ(specNamed(k3.layers, "up").kind, "up_sampling2d");
  EXPECT_EQ(specNamed(k3.layers, "up").outputShape, (S{8, 8, 6}));
  EXPECT_EQ(specNamed(k3.layers, "up_wide").outputShape, (S{6, 9, 3}));
  EXPECT_EQ(specNamed(k3.layers, "up1").kind, "up_sampling1d");
  EXPECT_EQ(specNamed(k3.layers, "up1").outputShape, (S{8, 4}));
  EXPECT_EQ(specNamed(k3.layers, "swap").kind, "permute");
  EXPECT_EQ(specNamed(k3.layers, "swap").axes, (std::vector<std::int64_t>{2, 1, 3}));
  EXPECT_EQ(specNamed(tf2.layers, "features_first").outputShape, (S{9, 18}));
}

TEST(ReshapingLayersReading, WorkloadKeysAndKerasDefaults) {
  const Workload w = parseWorkload(workload({{{"type", "up_sampling2d"}, {"name", "a"}},
                                             {{"type", "up_sampling2d"}, {"size", {1, 3}}, {"name", "b"}},
                                             {{"type", "up_sampling2d"}, {"size", 2}, {"interpolation", "nearest"}, {"name", "c"}},
                                             {{"type", "reshape"}, {"target_shape", {192, 2}}},
                                             {{"type", "up_sampling1d"}, {"name", "d"}},
                                             {{"type", "up_sampling1d"}, {"size", 3}, {"name", "e"}}},
                                            {2, 2, 2}),
                                   "w.json");
  EXPECT_EQ(specNamed(w.layers, "a").outputShape, (S{4, 4, 2}));  // size (2, 2)
  EXPECT_EQ(specNamed(w.layers, "b").outputShape, (S{4, 12, 2}));
  EXPECT_EQ(specNamed(w.layers, "c").outputShape, (S{8, 24, 2}));
  EXPECT_EQ(specNamed(w.layers, "d").outputShape, (S{384, 2}));  // size 2
  EXPECT_EQ(specNamed(w.layers, "e").outputShape, (S{1152, 2}));
}

TEST(ReshapingLayersReading, ValuesNotModelledAreClearErrors) {
  json k3 = readJson(src("tests/data/keras/reshaping_layers_keras3.json"));
  for (const char* interpolation : {"bilinear", "bicubic", "lanczos3", "area"}) {
    json m = k3;
    layerNamed(m, "up")["interpolation"] = interpolation;
    expectMentions(errorOf([&] { parseKerasModel(m, "model.json"); }),
                   {"model.json", "layer 'up' (UpSampling2D)", "interpolation", std::string("'") + interpolation + "'",
                    "not modelled", "nearest"});
  }
  json m = k3;
  layerNamed(m, "up")["data_format"] = "channels_first";
  expectMentions(errorOf([&] { parseKerasModel(m, "model.json"); }),
                 {"layer 'up' (UpSampling2D)", "data_format", "channels_first", "channels_last"});
  m = k3;
  layerNamed(m, "up1")["size"] = 0;
  expectMentions(errorOf([&] { parseKerasModel(m, "model.json"); }), {"layer 'up1' (UpSampling1D)", "size"});

  auto workloadError = [](const json& layers, const json& shape = {8, 8, 2}) {
    return errorOf([&] { parseWorkload(workload(layers, shape), "w.json"); });
  };
  expectMentions(workloadError({{{"type", "up_sampling2d"}, {"interpolation", "bilinear"}}}),
                 {"w.json", "model.layers[0].interpolation", "'bilinear'", "not modelled"});
  expectMentions(workloadError({{{"type", "up_sampling2d"}, {"size", {2, 0}}}}), {"model.layers[0].size"});
  expectMentions(workloadError({{{"type", "up_sampling1d"}}}), {"model.layers[0]", "steps x channels", "8x8x2"});
  expectMentions(workloadError({{{"type", "up_sampling2d"}}}, {64}), {"model.layers[0]", "rows x columns x channels", "64"});
  expectMentions(workloadError({{{"type", "up_sampling2d"}, {"size", {65536, 65536}}}}),
                 {"model.layers[0].size", "the limit for one tensor"});
}

TEST(ReshapingLayersReading, PermuteDims) {
  const Workload w = parseWorkload(workload({{{"type", "permute"}, {"dims", {3, 1, 2}}, {"name", "p"}},
                                             {{"type", "permute"}, {"dims", {1, 2, 3}}, {"name", "same"}}},
                                            {4, 5, 6}),
                                   "w.json");
  EXPECT_EQ(specNamed(w.layers, "p").outputShape, (S{6, 4, 5}));
  EXPECT_EQ(specNamed(w.layers, "same").outputShape, (S{6, 4, 5}));
  auto workloadError = [](const json& dims) {
    return errorOf([&] { parseWorkload(workload({{{"type", "permute"}, {"dims", dims}}}), "w.json"); });
  };
  for (const json& dims : {json{2, 1}, json{0, 1, 2}, json{1, 1, 2}, json{1, 2, 4}})
    expectMentions(workloadError(dims), {"w.json", "model.layers[0].dims", "is not a permutation of the axes 1..3", "8x8x2"});
  expectMentions(workloadError(json::array()), {"model.layers[0].dims"});
  expectMentions(errorOf([&] { parseWorkload(workload({{{"type", "permute"}}}), "w.json"); }), {"model.layers[0].dims"});
  json k3 = readJson(src("tests/data/keras/reshaping_layers_keras3.json"));
  layerNamed(k3, "swap")["dims"] = {3, 2, 2};
  expectMentions(errorOf([&] { parseKerasModel(k3, "model.json"); }),
                 {"model.json", "layer 'swap' (Permute)", "dims", "[3,2,2]", "not a permutation"});
  layerNamed(k3, "swap")["dims"] = "2,1,3";
  expectMentions(errorOf([&] { parseKerasModel(k3, "model.json"); }), {"layer 'swap' (Permute)", "dims", "\"2,1,3\""});
}

// The ops layer `layer` of workload `w` builds in the training graph: kind, name, output shape.
struct BuiltOp {
  OpKind kind;
  std::string name;
  S shape;
  bool operator==(const BuiltOp& o) const { return kind == o.kind && name == o.name && shape == o.shape; }
};
std::ostream& operator<<(std::ostream& os, const BuiltOp& op) { return os << toString(op.kind) << " " << op.name; }
std::vector<BuiltOp> opsOf(const json& w, const std::string& layer) {
  const OpGraph g = buildTrainingGraph(parseWorkload(w, "w.json"));
  std::vector<BuiltOp> ops;
  for (const Op& op : g.ops)
    if (op.layer == layer) ops.push_back({op.kind, op.name, g.values[op.outputs[0]].shape});
  return ops;
}

// Forward one CopyView (a Copy program); backward the gradient rearranged
// into [copies, elements] (a CopyView) and summed over the copies
// (ReduceRows), in the input's shape (a Reshape, no program). Size 1 is the
// input itself: no op.
TEST(ReshapingLayersReading, UpSamplingBuildsACopyAndASumOfCopies) {
  json w = workload({{{"type", "conv2d"}, {"filters", 3}, {"kernel_size", 3}, {"padding", "same"}},
                     {{"type", "up_sampling2d"}, {"size", {2, 3}}, {"name", "up"}}});
  EXPECT_EQ(opsOf(w, "up"), (std::vector<BuiltOp>{{OpKind::CopyView, "up_sampling", {4, 16, 24, 3}},
                                                  {OpKind::CopyView, "up_sampling_grad_copies", {6, 4 * 8 * 8 * 3}},
                                                  {OpKind::ReduceRows, "up_sampling_grad_sum", {4 * 8 * 8 * 3}},
                                                  {OpKind::Reshape, "up_sampling_grad", {4, 8, 8, 3}}}));
  w["model"]["layers"][1]["size"] = 1;
  EXPECT_TRUE(opsOf(w, "up").empty());
}

// A permutation is one CopyView forward and its inverse backward; the identity is no op.
TEST(ReshapingLayersReading, PermuteBuildsATransposeAndItsInverse) {
  json w = workload({{{"type", "conv2d"}, {"filters", 3}, {"kernel_size", 3}},
                     {{"type", "permute"}, {"dims", {3, 1, 2}}, {"name", "p"}}});
  EXPECT_EQ(opsOf(w, "p"), (std::vector<BuiltOp>{{OpKind::CopyView, "permute", {4, 3, 6, 6}},
                                                 {OpKind::CopyView, "permute_grad", {4, 6, 6, 3}}}));
  w["model"]["layers"][1]["dims"] = {1, 2, 3};
  EXPECT_TRUE(opsOf(w, "p").empty());
}

}  // namespace
}  // namespace ipusim::scheduler::reshaping_layers_reading_test
