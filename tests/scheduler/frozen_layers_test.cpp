// Frozen layers (Keras's trainable: false, the transfer-learning idiom): a
// frozen layer's weights get no gradient op and no update, and the layers
// before it still train through it; a frozen batch normalization normalizes
// by its moving statistics in fit too and leaves them. Each run matches the
// CPU reference (which skips the frozen weights' updates on its own) in its
// losses and final weights; the Keras readers take trainable from a layer's
// config and from a nested model's; fit refuses a model with nothing left to train.
#include "training_harness.hpp"

#include "scheduler/graph/op_graph.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace ipusim::testing::frozen_layers_test {
namespace {

constexpr std::uint64_t kSteps = 8;
const nlohmann::json kAdam = {{"type", "adam"}, {"learning_rate", 0.01}};

// The ops of layer `layer` whose name ends with `suffix`.
std::size_t opsOf(const scheduler::OpGraph& g, const std::string& layer, const std::string& suffix) {
  return std::size_t(std::count_if(g.ops.begin(), g.ops.end(), [&](const scheduler::Op& op) {
    return op.layer == layer && op.name.size() >= suffix.size() &&
           op.name.compare(op.name.size() - suffix.size(), suffix.size(), suffix) == 0;
  }));
}

TEST(FrozenLayers, AFrozenDenseBetweenTrainedOnesKeepsItsWeightsAndPassesTheGradient) {
  const nlohmann::json j = smallJob(R"([
    {"type": "dense", "units": 12, "activation": "relu", "name": "first"},
    {"type": "dense", "units": 8, "activation": "relu", "name": "frozen", "trainable": false},
    {"type": "dense", "units": 10, "activation": "softmax", "name": "head"}])", {6}, kAdam, 3);
  const scheduler::Workload w = scheduler::parseWorkload(j, "frozen.json");
  const scheduler::OpGraph g = scheduler::buildTrainingGraph(w);
  EXPECT_EQ(opsOf(g, "frozen", "kernel_grad"), 0u);
  EXPECT_EQ(opsOf(g, "frozen", "bias_grad"), 0u);
  EXPECT_EQ(opsOf(g, "frozen", "input_grad"), 1u);  // the first layer still trains through it
  EXPECT_EQ(opsOf(g, "first", "kernel_grad"), 1u);
  EXPECT_EQ(g.weights.size(), 4u);       // first's and head's kernel and bias
  EXPECT_EQ(g.modelWeights.size(), 6u);  // and the frozen layer's

  const TrainingLosses r = runTraining(w, kSteps);
  expectSameLosses(r, kSteps);
  expectSameWeights(r);
  // compile's "weights" line: 6x12+12, 12x8+8 (frozen) and 8x10+10 elements.
  EXPECT_EQ(r.compiled.report.weightElements, 84u + 104u + 90u);
  EXPECT_EQ(r.compiled.report.trainableWeightElements, 84u + 90u);
  // The frozen kernel and bias (tensors 2 and 3) are as they were loaded; the others moved.
  const auto initial = [&](std::size_t t) {
    const std::vector<double> v = ir::initialValues(r.compiled.exe.tensors[r.compiled.weightTensors.at(t)]);
    return std::vector<float>(v.begin(), v.end());
  };
  for (std::size_t t : {2, 3}) {
    const std::vector<float> start = initial(t);
    if (start.empty()) {  // zeros: a bias
      for (float v : r.simulatedWeights[0][t]) EXPECT_EQ(v, 0.0f);
    } else {
      EXPECT_EQ(r.simulatedWeights[0][t], start) << "tensor " << t;
    }
  }
  EXPECT_NE(r.simulatedWeights[0][0], initial(0));
}

TEST(FrozenLayers, AFrozenBatchNormalizationNormalizesByItsMovingStatisticsInFit) {
  const nlohmann::json j = smallJob(R"([
    {"type": "dense", "units": 8, "name": "first"},
    {"type": "batch_normalization", "name": "norm", "trainable": false},
    {"type": "dense", "units": 10, "activation": "softmax", "name": "head"}])", {6}, kAdam, 4);
  const scheduler::Workload w = scheduler::parseWorkload(j, "frozen_bn.json");
  const scheduler::OpGraph g = scheduler::buildTrainingGraph(w);
  EXPECT_EQ(opsOf(g, "norm", "statistics"), 0u);  // no batch statistics, no moving-average update
  EXPECT_EQ(opsOf(g, "norm", "gamma_grad"), 0u);
  const TrainingLosses r = runTraining(w, kSteps);
  expectSameLosses(r, kSteps);
  expectSameWeights(r);
  ASSERT_EQ(r.simulatedMoving.size(), 2u);
  for (float v : r.simulatedMoving[0]) EXPECT_EQ(v, 0.0f);  // moving mean: zeros, left
  for (float v : r.simulatedMoving[1]) EXPECT_EQ(v, 1.0f);  // moving variance: ones, left
}

TEST(FrozenLayers, AFrozenConvolutionalBaseBeforeATrainedHeadKeepsNoActivationForIt) {
  const nlohmann::json j = smallJob(R"([
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "activation": "relu", "name": "base", "trainable": false},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "activation": "softmax", "name": "head"}])", {6, 6, 1}, kAdam, 5);
  const scheduler::Workload w = scheduler::parseWorkload(j, "frozen_conv.json");
  const scheduler::OpGraph g = scheduler::buildTrainingGraph(w);
  EXPECT_EQ(opsOf(g, "base", "_grad"), 0u);  // nothing before it trains: no backward op at all
  expectSameTraining(j, "frozen_conv.json", kSteps);
}

TEST(FrozenLayers, FitRefusesAModelWithNothingLeftToTrainAndPredictTakesIt) {
  nlohmann::json j = smallJob(R"([
    {"type": "dense", "units": 10, "activation": "softmax", "trainable": false}])", {6}, kAdam, 1);
  j["task"] = "fit";  // (a file naming no task is checked once the command sets it: `ipusim run` fits)
  EXPECT_NE(workloadRefusal(j).find("its one layer with weights is frozen (trainable: false), so fit would train "
                                    "nothing"),
            std::string::npos)
      << workloadRefusal(j);
  j["task"] = "predict";
  j["training"]["outfeed"] = {{"mode", "ALL"}};
  EXPECT_EQ(workloadRefusal(j), "accepted");
  j = smallJob(R"([{"type": "dense", "units": 10, "trainable": "no"}])", {6}, kAdam, 1);
  EXPECT_NE(workloadRefusal(j).find("trainable"), std::string::npos) << workloadRefusal(j);
}

// A TF 2.x Sequential: a frozen Dense, and a nested model set not trainable
// (its Dense says nothing) before a trained head.
const char* kKerasFile = R"({"class_name": "Sequential", "keras_version": "2.4.0", "backend": "tensorflow",
  "config": {"name": "transfer", "layers": [
    {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 6], "dtype": "float32", "name": "in"}},
    {"class_name": "Dense", "config": {"name": "own", "units": 8, "activation": "relu", "trainable": false}},
    {"class_name": "Sequential", "config": {"name": "base", "trainable": false, "layers": [
      {"class_name": "Dense", "config": {"name": "inner", "units": 5, "activation": "relu", "trainable": true}}]}},
    {"class_name": "Dense", "config": {"name": "head", "units": 10, "activation": "softmax", "trainable": true}}]}})";

TEST(FrozenLayers, KerasFilesFreezeByTheLayersConfigAndByANestedModels) {
  const scheduler::KerasModel m = scheduler::parseKerasModel(nlohmann::json::parse(kKerasFile), "transfer.json");
  std::map<std::string, bool> trainable;
  for (const auto& l : m.layers) trainable[l.name] = l.trainable;
  EXPECT_EQ(trainable, (std::map<std::string, bool>{{"own", false}, {"inner", false}, {"head", true}}));

  nlohmann::json bad = nlohmann::json::parse(kKerasFile);
  bad["config"]["layers"][2]["config"]["trainable"] = "false";
  try {
    scheduler::parseKerasModel(bad, "transfer.json");
    ADD_FAILURE() << "a trainable that is not a boolean was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nested model 'base': config.trainable: expected true or false"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ipusim::testing::frozen_layers_test
