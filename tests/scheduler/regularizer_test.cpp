// Keras's regularizers (scheduler/models/regularizer.hpp): read from a
// workload or a Keras file by the same rules (names with Keras's defaults,
// L1/L2/L1L2 objects, refusals with the same message); the penalties on
// kernels, biases, the other weights and layer outputs trained on the
// device against the CPU reference (tests/scheduler/cpu_reference.cpp)
// within 1e-4 over 20 steps, the regularization term outfed beside the loss.
#include "scheduler/compiler.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/regularizer.hpp"
#include "scheduler/models/workload.hpp"
#include "training_harness.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>

namespace ipusim::testing::regularizer_test {
namespace {

using scheduler::RegularizerSpec;

RegularizerSpec read(const nlohmann::json& v) {
  RegularizerSpec r;
  EXPECT_TRUE(scheduler::readRegularizer(v, r, [](const std::string& what) { throw std::invalid_argument(what); }));
  return r;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Regularizers, NamesAndObjectsWithKerasDefaults) {
  EXPECT_EQ(read("l1"), (RegularizerSpec{0.01, 0, ""}));
  EXPECT_EQ(read("l2"), (RegularizerSpec{0, 0.01, ""}));
  EXPECT_EQ(read("l1_l2"), (RegularizerSpec{0.01, 0.01, ""}));  // the string's defaults (tf_keras's deserialize)
  // Keras 3 objects, the classes' defaults: L1L2() is zeros.
  EXPECT_EQ(read({{"module", "keras.regularizers"}, {"class_name", "L1L2"}, {"config", {{"l1", 0.0}, {"l2", 0.003}}},
                  {"registered_name", nullptr}}),
            (RegularizerSpec{0, 0.003, ""}));
  EXPECT_EQ(read({{"class_name", "L1L2"}, {"config", nlohmann::json::object()}}), (RegularizerSpec{0, 0, ""}));
  EXPECT_EQ(read({{"class_name", "L1"}, {"config", {{"l1", nullptr}}}}), (RegularizerSpec{0.01, 0, ""}));
  // TF 2.x: float32 factors and L2's legacy "l".
  EXPECT_EQ(read({{"class_name", "L2"}, {"config", {{"l2", 0.009999999776482582}}}}),
            (RegularizerSpec{0, 0.009999999776482582, ""}));
  EXPECT_EQ(read({{"class_name", "L2"}, {"config", {{"l", 0.5}}}}), (RegularizerSpec{0, 0.5, ""}));
  // The workload's objects.
  EXPECT_EQ(read({{"type", "l1"}, {"l1", 0.2}}), (RegularizerSpec{0.2, 0, ""}));
  EXPECT_EQ(read({{"type", "l2"}}), (RegularizerSpec{0, 0.01, ""}));
  RegularizerSpec none;
  EXPECT_FALSE(scheduler::readRegularizer(nullptr, none, [](const std::string&) {}));
}

TEST(Regularizers, RefusedByName) {
  auto error = [](const nlohmann::json& v) {
    return errorOf([&] { read(v); });
  };
  EXPECT_NE(error({{"class_name", "OrthogonalRegularizer"}, {"config", {{"factor", 0.01}, {"mode", "rows"}}}})
                .find("OrthogonalRegularizer"),
            std::string::npos);
  EXPECT_NE(error("orthogonal_regularizer").find("'orthogonal_regularizer' is not modelled (supported: L1, L2, L1L2"),
            std::string::npos);
  EXPECT_NE(error({{"class_name", "L1"}, {"config", {{"l1", -0.1}}}}).find("l1: expected a non-negative number, got -0.1"),
            std::string::npos);
  EXPECT_NE(error({{"type", "l1"}, {"l2", 0.1}}).find("l2: not a key of l1"), std::string::npos);
  EXPECT_NE(error({{"l1", 0.1}}).find("missing type"), std::string::npos);
}

nlohmann::json denseJob(const nlohmann::json& hidden) {
  nlohmann::json j = smallJob(R"([{"type": "dense", "units": 12, "activation": "tanh", "name": "hidden"},
                                  {"type": "dense", "units": 10, "name": "out"}])",
                              {16}, {{"type", "sgd"}, {"learning_rate", 0.1}, {"momentum", 0.9}}, 5);
  for (const auto& item : hidden.items()) j["model"]["layers"][0][item.key()] = item.value();
  j["loss"] = {{"type", "sparse_categorical_crossentropy"}, {"from_logits", true}};
  return j;
}

// The same bad value from a workload and from a Keras file: the same message
// after the key.
TEST(Regularizers, TheSameRulesInBothFormats) {
  const nlohmann::json bad{{"class_name", "L2"}, {"config", {{"l2", "a lot"}}}};
  const std::string workload = errorOf([&] { scheduler::parseWorkload(denseJob({{"kernel_regularizer", bad}}), "w.json"); });
  EXPECT_NE(workload.find("w.json: model.layers[0].kernel_regularizer: l2: expected a non-negative number, got \"a lot\""),
            std::string::npos)
      << workload;
  nlohmann::json keras = nlohmann::json::parse(R"({"class_name": "Sequential", "keras_version": "2.12.0", "config": {"name": "s", "layers": [
    {"class_name": "Dense", "config": {"name": "d1", "units": 10, "batch_input_shape": [null, 8]}}]}})");
  keras["config"]["layers"][0]["config"]["kernel_regularizer"] = bad;
  const std::string file = errorOf([&] { scheduler::parseKerasModel(keras, "model.json"); });
  EXPECT_NE(file.find("model.json: layer 'd1' (Dense): kernel_regularizer: l2: expected a non-negative number, got \"a lot\""),
            std::string::npos)
      << file;
  // A layer kind without weights has no regularizer keys in the workload format.
  nlohmann::json flat = denseJob({});
  flat["model"]["layers"].insert(flat["model"]["layers"].begin(),
                                 nlohmann::json{{"type", "flatten"}, {"kernel_regularizer", "l2"}});
  EXPECT_NE(errorOf([&] { scheduler::parseWorkload(flat, "w.json"); }).find("kernel_regularizer"), std::string::npos);
}

TEST(Regularizers, KerasFileRegularizersReachTheirWeights) {
  nlohmann::json j = nlohmann::json::parse(R"({"class_name": "Sequential", "keras_version": "2.12.0", "config": {"name": "s", "layers": [
    {"class_name": "Dense", "config": {"name": "d1", "units": 16, "activation": "relu", "batch_input_shape": [null, 8],
      "kernel_regularizer": {"class_name": "L2", "config": {"l2": 0.001}},
      "bias_regularizer": {"class_name": "L1", "config": {"l1": 0.002}},
      "activity_regularizer": {"class_name": "L1L2", "config": {"l1": 0.003, "l2": 0.004}}}},
    {"class_name": "Dense", "config": {"name": "d2", "units": 10, "activation": "softmax", "kernel_regularizer": null}}]}})");
  const scheduler::KerasModel m = scheduler::parseKerasModel(j, "model.json");
  ASSERT_EQ(m.layers[0].regularizers.size(), 3u);
  EXPECT_EQ(m.layers[0].regularizers.at("kernel"), (RegularizerSpec{0, 0.001, ""}));
  EXPECT_EQ(m.layers[0].regularizers.at("bias"), (RegularizerSpec{0.002, 0, ""}));
  EXPECT_EQ(m.layers[0].regularizers.at("activity"), (RegularizerSpec{0.003, 0.004, ""}));
  EXPECT_TRUE(m.layers[1].regularizers.empty());
}

// An activity penalty on probabilities the loss computes inside itself is refused, naming the layer.
TEST(Regularizers, ActivityOnAFusedSoftmaxIsRefused) {
  nlohmann::json j = denseJob({});
  j["model"]["layers"][1]["activation"] = "softmax";
  j["model"]["layers"][1]["activity_regularizer"] = "l2";
  j.erase("loss");
  const std::string e = errorOf([&] { scheduler::parseWorkload(j, "w.json"); });
  EXPECT_NE(e.find("w.json: model.layers: the last layer ('out') has an activity_regularizer \"l2\" but its softmax is "
                   "computed inside sparse_categorical_crossentropy"),
            std::string::npos)
      << e;
}

void expectSameRegularization(const TrainingLosses& r, std::uint64_t steps) {
  ASSERT_EQ(r.simulatedRegularization.size(), steps);
  ASSERT_EQ(r.referenceRegularization.size(), steps);
  for (std::size_t s = 0; s < steps; ++s) {
    EXPECT_GT(r.referenceRegularization[s], 0.0f) << "step " << s;
    EXPECT_NEAR(r.simulatedRegularization[s], r.referenceRegularization[s], 1e-4 * r.referenceRegularization[s])
        << "step " << s;
  }
}

void expectTrainsAsReference(const nlohmann::json& j, std::uint64_t steps = 20) {
  const scheduler::Workload w = scheduler::parseWorkload(j, "regularizers.json");
  const TrainingLosses r = runTraining(w, steps);
  expectSameLosses(r, steps);
  expectSameWeights(r);
  expectSameRegularization(r, steps);
  EXPECT_EQ(r.compiled.outfeed, (std::vector<std::string>{"loss", "accuracy", "regularization"}));
}

// Kernel, bias and activity penalties of a dense layer, L1 and L2 together:
// the loss is Keras's total (the data loss plus the penalties).
TEST(Regularizers, DenseTrainsAsReference) {
  expectTrainsAsReference(denseJob({{"kernel_regularizer", {{"type", "l1_l2"}, {"l1", 0.01}, {"l2", 0.02}}},
                                    {"bias_regularizer", {{"type", "l1"}, {"l1", 0.05}}},
                                    {"activity_regularizer", "l2"}}));
}

// The other weights: a depthwise and a separable convolution's kernels,
// batch normalization's gamma and beta, PReLU's alpha; an activity
// penalty mid-model. (The bias before the batch normalization has no data
// gradient but rounding noise, so an L1 penalty there would move it by the
// sign of that noise: an L2 one keeps the comparison meaningful.)
TEST(Regularizers, ConvolutionsAndOtherWeightsTrainAsReference) {
  nlohmann::json j = smallJob(R"([
    {"type": "depthwise_conv2d", "kernel_size": 3, "depth_multiplier": 2, "depthwise_regularizer": "l2", "bias_regularizer": "l2"},
    {"type": "batch_normalization", "gamma_regularizer": "l2", "beta_regularizer": {"type": "l1", "l1": 0.03}},
    {"type": "prelu", "alpha_regularizer": {"type": "l1_l2", "l1": 0.02, "l2": 0.05}},
    {"type": "separable_conv2d", "filters": 4, "kernel_size": 3, "depthwise_regularizer": "l1", "pointwise_regularizer": "l2",
     "activity_regularizer": {"type": "l1_l2", "l1": 0.001, "l2": 0.002}, "activation": "relu"},
    {"type": "flatten"},
    {"type": "dense", "units": 10, "kernel_regularizer": "l1"}])",
                                    {8, 8, 2}, {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}}, 9);
  j["loss"] = {{"type", "sparse_categorical_crossentropy"}, {"from_logits", true}};
  expectTrainsAsReference(j);
}

// Sharded over two IPUs with gradient accumulation (the penalties read
// weights and outputs on both IPUs; each mini-batch's gradient carries the
// weights' penalty gradient, as the reference's N-times-larger step does),
// and replicated (each replica's loss carries the penalties).
TEST(Regularizers, ShardedWithAccumulationTrainsAsReference) {
  nlohmann::json j = denseJob({{"kernel_regularizer", "l2"}, {"activity_regularizer", "l1"}});
  j["model"]["layers"][1]["shard"] = 1;
  j["model"]["layers"][1]["bias_regularizer"] = "l1_l2";
  j["ipu"]["num_ipus"] = 2;
  j["optimizer"] = {{"type", "sgd"}, {"learning_rate", 0.1}};
  j["training"]["gradient_accumulation_count"] = 2;
  const TrainingLosses r = runTraining(scheduler::parseWorkload(j, "sharded.json"), 20);
  expectTrainsAsAccumulation(r, 2, 20);
}

TEST(Regularizers, ReplicatedTrainsAsReference) {
  nlohmann::json j = denseJob({{"kernel_regularizer", "l2"}, {"bias_regularizer", "l2"}});
  j["ipu"]["num_ipus"] = 2;
  j["optimizer"] = {{"type", "sgd"}, {"learning_rate", 0.1}};
  const TrainingLosses r = runTraining(scheduler::parseWorkload(j, "replicated.json"), 20);
  expectSameLosses(r, 20);
  expectSameWeights(r);
}

// Pipelining splits the step into stage passes; the penalties' one sum over
// every stage is not split (not modelled): refused naming the layer.
TEST(Regularizers, PipeliningRefusesThem) {
  nlohmann::json j = denseJob({{"kernel_regularizer", "l2"}, {"stage", 0}});
  j["model"]["layers"][1]["stage"] = 1;
  j["optimizer"] = {{"type", "sgd"}, {"learning_rate", 0.1}};
  j["ipu"]["num_ipus"] = 2;
  j["pipeline"] = {{"gradient_accumulation_count", 4}};
  const std::string e = errorOf([&] { scheduler::parseWorkload(j, "w.json"); });
  EXPECT_NE(e.find("w.json: pipeline: layer 'hidden' has a kernel regularizer: pipelining models without regularizers"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace ipusim::testing::regularizer_test
