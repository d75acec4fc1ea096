// The model as a graph of layer calls (layer_graph.hpp): names resolved into
// inputs, the layers put in topological order with the output last, and one
// clear error per bad graph naming the file, the layer and the key.
#include "scheduler/models/layer_graph.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ipusim::scheduler::layer_graph_test {
namespace {

nlohmann::json workload(const char* layers) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "features": 16, "classes": 10},
    "training": {"steps": 10, "steps_per_execution": 10},
    "loss": {"type": "sparse_categorical_crossentropy", "from_logits": true}})");
  j["model"]["layers"] = nlohmann::json::parse(layers);
  return j;
}

std::string errorOf(const char* layers) {
  try {
    parseWorkload(workload(layers), "graph.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

void expectMentions(const std::string& message, const std::vector<std::string>& fragments) {
  for (const auto& f : fragments) EXPECT_NE(message.find(f), std::string::npos) << "'" << f << "' not in: " << message;
}

TEST(LayerGraph, AChainReadsTheLayerBefore) {
  const Workload w = parseWorkload(workload(R"([{"type": "dense", "units": 8}, {"type": "dense", "units": 10}])"), "g.json");
  EXPECT_EQ(w.layers[0].inputs, std::vector<std::size_t>{kModelInput});
  EXPECT_EQ(w.layers[1].inputs, std::vector<std::size_t>{0});
}

// Listed out of order: sorted so that every input comes first, the given
// order kept where it is one, the output last.
TEST(LayerGraph, LayersAreOrderedTopologicallyWithTheOutputLast) {
  const Workload w = parseWorkload(workload(R"([
    {"type": "dense", "units": 10, "name": "out", "inputs": ["sum"]},
    {"type": "dense", "units": 8, "name": "a", "inputs": ["input"]},
    {"type": "add", "name": "sum", "inputs": ["a", "b"]},
    {"type": "dense", "units": 8, "name": "b", "inputs": ["input"]}])"),
                                   "g.json");
  std::vector<std::string> names;
  for (const LayerSpec& l : w.layers) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "sum", "out"}));
  EXPECT_EQ(w.layers[2].inputs, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(w.layers[3].inputs, std::vector<std::size_t>{2});
  EXPECT_EQ(w.layers[2].outputShape, std::vector<std::uint64_t>{8});
}

TEST(LayerGraph, ConcatenateSumsItsAxis) {
  const Workload w = parseWorkload(workload(R"([
    {"type": "dense", "units": 8, "name": "a"},
    {"type": "dense", "units": 6, "name": "b", "inputs": ["input"]},
    {"type": "concatenate", "inputs": ["a", "b", "a"]},
    {"type": "dense", "units": 10}])"),
                                   "g.json");
  EXPECT_EQ(w.layers[2].outputShape, std::vector<std::uint64_t>{22});
  EXPECT_EQ(w.layers[2].axis, 1);  // -1, counted as Keras counts it
}

// A residual block's gradient: the skip's read of the stem adds a second
// gradient to the stem's output (one Add op summing them).
TEST(LayerGraph, AValueReadTwiceGetsTheSumOfItsGradients) {
  const Workload w = parseWorkload(workload(R"([
    {"type": "dense", "units": 8, "name": "stem"},
    {"type": "dense", "units": 8, "name": "f"},
    {"type": "add", "name": "skip", "inputs": ["stem", "f"]},
    {"type": "dense", "units": 10}])"),
                                   "g.json");
  const OpGraph g = buildTrainingGraph(w);
  int sums = 0;
  for (const Op& op : g.ops)
    if (op.kind == OpKind::Add && op.name == "grad_sum") {
      ++sums;
      EXPECT_EQ(op.layer, "stem");
    }
  EXPECT_EQ(sums, 1);
}

TEST(LayerGraphErrors, InputThatNamesNoLayer) {
  expectMentions(errorOf(R"([{"type": "dense", "units": 8, "name": "a"}, {"type": "dense", "units": 10, "inputs": ["nope"]}])"),
                 {"graph.json", "model.layers[1].inputs", "'nope' names no layer"});
}

TEST(LayerGraphErrors, CycleNamesEveryLayerOfIt) {
  expectMentions(errorOf(R"([
    {"type": "dense", "units": 8, "name": "a", "inputs": ["c"]},
    {"type": "dense", "units": 8, "name": "b", "inputs": ["a"]},
    {"type": "dense", "units": 8, "name": "c", "inputs": ["b"]},
    {"type": "dense", "units": 10, "inputs": ["c"]}])"),
                 {"graph.json", ".inputs", "cycle", "'a'", "'b'", "'c'"});
}

TEST(LayerGraphErrors, TwoLayersThatNoLayerReads) {
  expectMentions(errorOf(R"([
    {"type": "dense", "units": 8, "name": "a"}, {"type": "dense", "units": 8, "name": "dead", "inputs": ["a"]},
    {"type": "dense", "units": 10, "inputs": ["a"]}])"),
                 {"graph.json", "model.layers[2]", "no layer reads the outputs of 'dead', 'dense_2'", "one output"});
}

TEST(LayerGraphErrors, MergeWithOneInput) {
  expectMentions(errorOf(R"([{"type": "dense", "units": 10, "name": "a"}, {"type": "add", "inputs": ["a"]}])"),
                 {"graph.json", "model.layers[1].inputs", "two or more inputs, got 1"});
}

TEST(LayerGraphErrors, DenseWithTwoInputs) {
  expectMentions(errorOf(R"([{"type": "dense", "units": 8, "name": "a"}, {"type": "dense", "units": 10, "inputs": ["a", "input"]}])"),
                 {"graph.json", "model.layers[1].inputs", "reads one input, got 2"});
}

TEST(LayerGraphErrors, ShapesThatDoNotMerge) {
  expectMentions(errorOf(R"([
    {"type": "dense", "units": 8, "name": "a"}, {"type": "dense", "units": 6, "name": "b", "inputs": ["input"]},
    {"type": "add", "inputs": ["a", "b"]}, {"type": "dense", "units": 10}])"),
                 {"graph.json", "model.layers[2]", "do not merge", "8, 6"});
}

TEST(LayerGraphErrors, TwoLayersOfOneName) {
  expectMentions(errorOf(R"([{"type": "dense", "units": 8, "name": "a"}, {"type": "dense", "units": 10, "name": "a"}])"),
                 {"graph.json", "model.layers[1].name", "'a' names two layers"});
}

}  // namespace
}  // namespace ipusim::scheduler::layer_graph_test
