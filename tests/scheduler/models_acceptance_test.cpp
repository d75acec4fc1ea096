// Acceptance of the layers, optimizers and losses users bring (issue "Models
// users bring"): each configuration, compiled and run in the SystemC model,
// computes the same losses as the CPU reference over 20 steps (relative
// 1e-4), from the same initial weights, batches and dropout masks. One
// simulation per test (per process).
#include "training_harness.hpp"

#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ipusim::testing::models_acceptance_test {
namespace {

constexpr std::uint64_t kSteps = 20;

void expectSameLosses(const TrainingLosses& r) { expectSameLosses(r, kSteps); }

// A small synthetic job (16 tiles): 64 features, two hidden layers, 10 classes.
nlohmann::json job(const nlohmann::json& layers, const nlohmann::json& optimizer) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 7, "features": 64, "classes": 10, "examples": 64},
    "training": {"steps": 20, "steps_per_execution": 4},
    "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 3})");
  j["model"]["layers"] = layers;
  j["optimizer"] = optimizer;
  return j;
}

nlohmann::json mlp(const char* hidden) {
  return nlohmann::json::array({{{"type", "dense"}, {"units", 32}, {"activation", hidden}},
                                {{"type", "dense"}, {"units", 16}, {"activation", hidden}},
                                {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}});
}

TrainingLosses run(const nlohmann::json& j) { return runTraining(scheduler::parseWorkload(j, "models.json"), kSteps); }

TEST(ModelsAcceptance, SgdWithMomentum) {
  expectSameLosses(run(job(mlp("relu"), {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}})));
}

TEST(ModelsAcceptance, SgdWithNesterovMomentum) {
  expectSameLosses(
      run(job(mlp("relu"), {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}, {"nesterov", true}})));
}

TEST(ModelsAcceptance, Adam) { expectSameLosses(run(job(mlp("relu"), {{"type", "adam"}}))); }

TEST(ModelsAcceptance, Rmsprop) { expectSameLosses(run(job(mlp("relu"), {{"type", "rmsprop"}}))); }

TEST(ModelsAcceptance, RmspropCenteredWithMomentum) {
  expectSameLosses(run(job(mlp("relu"), {{"type", "rmsprop"}, {"centered", true}, {"momentum", 0.5}})));
}

TEST(ModelsAcceptance, SigmoidActivation) {
  expectSameLosses(run(job(mlp("sigmoid"), {{"type", "sgd"}, {"learning_rate", 0.5}})));
}

TEST(ModelsAcceptance, TanhActivation) { expectSameLosses(run(job(mlp("tanh"), {{"type", "sgd"}, {"learning_rate", 0.1}}))); }

TEST(ModelsAcceptance, GeluActivation) { expectSameLosses(run(job(mlp("gelu"), {{"type", "sgd"}, {"learning_rate", 0.1}}))); }

// Activation layers, a dense layer without bias, a reshape and a flatten.
TEST(ModelsAcceptance, ActivationLayersReshapeAndNoBias) {
  const auto layers = nlohmann::json::parse(R"([
    {"type": "reshape", "target_shape": [8, 8]}, {"type": "flatten"},
    {"type": "dense", "units": 32, "use_bias": false}, {"type": "activation", "activation": "tanh"},
    {"type": "dense", "units": 10}, {"type": "activation", "activation": "softmax"}])");
  expectSameLosses(run(job(layers, {{"type", "sgd"}, {"learning_rate", 0.1}})));
}

// Dropout masks drawn on the device from the seed, new each step, the same in the backward pass.
TEST(ModelsAcceptance, DropoutOnDevice) {
  const auto layers = nlohmann::json::parse(R"([
    {"type": "dense", "units": 32, "activation": "relu"}, {"type": "dropout", "rate": 0.5},
    {"type": "dense", "units": 16, "activation": "relu"}, {"type": "dropout", "rate": 0.25, "seed": 1234},
    {"type": "dense", "units": 10, "activation": "softmax"}])");
  expectSameLosses(run(job(layers, {{"type", "adam"}})));
}

// from_logits=true: the model ends in Dense(10) and the loss applies the softmax.
TEST(ModelsAcceptance, LossFromLogits) {
  auto j = job(nlohmann::json::parse(R"([{"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 10}])"),
               {{"type", "sgd"}, {"learning_rate", 0.05}});
  j["loss"] = {{"type", "sparse_categorical_crossentropy"}, {"from_logits", true}};
  expectSameLosses(run(j));
}

// The losses over one-hot targets: categorical cross-entropy (softmax last,
// or from logits), binary cross-entropy (sigmoid last, or from logits) and
// the mean squared error; the accuracy beside each (none for the squared error).
TrainingLosses runLoss(const char* loss, bool fromLogits, const char* lastActivation) {
  auto j = job(nlohmann::json::parse(R"([{"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 10}])"),
               {{"type", "sgd"}, {"learning_rate", 0.1}});
  j["model"]["layers"][1]["activation"] = lastActivation;
  j["loss"] = {{"type", loss}};
  if (std::string(loss).find("crossentropy") != std::string::npos) j["loss"]["from_logits"] = fromLogits;
  return run(j);
}

void expectSameAccuracy(const TrainingLosses& r) {
  ASSERT_EQ(r.simulatedAccuracy.size(), kSteps);
  for (std::size_t s = 0; s < kSteps; ++s) EXPECT_FLOAT_EQ(r.simulatedAccuracy[s], r.referenceAccuracy[s]) << "step " << s;
}

TEST(ModelsAcceptance, CategoricalCrossentropyAfterSoftmax) {
  const auto r = runLoss("categorical_crossentropy", false, "softmax");
  expectSameLosses(r);
  expectSameAccuracy(r);
}

TEST(ModelsAcceptance, CategoricalCrossentropyFromLogits) {
  expectSameLosses(runLoss("categorical_crossentropy", true, "linear"));
}

TEST(ModelsAcceptance, BinaryCrossentropyAfterSigmoid) {
  const auto r = runLoss("binary_crossentropy", false, "sigmoid");
  expectSameLosses(r);
  expectSameAccuracy(r);
}

TEST(ModelsAcceptance, BinaryCrossentropyFromLogits) { expectSameLosses(runLoss("binary_crossentropy", true, "linear")); }

TEST(ModelsAcceptance, MeanSquaredError) {
  const auto r = runLoss("mean_squared_error", false, "linear");
  expectSameLosses(r);
  EXPECT_TRUE(r.simulatedAccuracy.empty());  // the outfeed carries the loss alone
}

// Keras's other regression losses: the mean absolute error (its gradient the
// sign of the error) and the Huber loss (quadratic within delta, linear beyond).
TEST(ModelsAcceptance, MeanAbsoluteError) {
  const auto r = runLoss("mean_absolute_error", false, "linear");
  expectSameLosses(r);
  EXPECT_TRUE(r.simulatedAccuracy.empty());
}

TEST(ModelsAcceptance, HuberWithASmallDelta) {
  auto j = job(nlohmann::json::parse(R"([{"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 10}])"),
               {{"type", "sgd"}, {"learning_rate", 0.1}});
  j["loss"] = {{"type", "huber"}, {"delta", 0.3}};  // both zones are visited
  expectSameLosses(run(j));
}

// Keras's kl_divergence of a softmax output (its own op) against the
// one-hot targets, clipped to [1e-7, 1]: the zeros of the targets are 1e-7.
TEST(ModelsAcceptance, KlDivergenceOfASoftmaxOutput) {
  auto j = job(nlohmann::json::parse(R"([{"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 10, "activation": "softmax"}])"),
               {{"type", "sgd"}, {"learning_rate", 0.1}});
  j["loss"] = "kl_divergence";
  const auto r = run(j);
  expectSameLosses(r);
  EXPECT_EQ(r.compiled.outfeed, std::vector<std::string>{"loss"});  // no accuracy beside it, as Keras's default metrics
}

// Label smoothing inside the cross-entropies (the accuracy reads the labels).
TEST(ModelsAcceptance, CategoricalCrossentropyWithLabelSmoothing) {
  auto j = job(nlohmann::json::parse(R"([{"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 10, "activation": "softmax"}])"),
               {{"type", "sgd"}, {"learning_rate", 0.1}});
  j["loss"] = {{"type", "categorical_crossentropy"}, {"label_smoothing", 0.1}};
  const auto r = run(j);
  expectSameLosses(r);
  expectSameAccuracy(r);
}

TEST(ModelsAcceptance, BinaryCrossentropyWithLabelSmoothing) {
  auto j = job(nlohmann::json::parse(R"([{"type": "dense", "units": 32, "activation": "relu"}, {"type": "dense", "units": 10, "activation": "sigmoid"}])"),
               {{"type", "sgd"}, {"learning_rate", 0.1}});
  j["loss"] = {{"type", "binary_crossentropy"}, {"label_smoothing", 0.2}};
  const auto r = run(j);
  expectSameLosses(r);
  expectSameAccuracy(r);
}

// A binary classifier: one sigmoid unit under binary cross-entropy, its
// target the label itself (0 or 1), as Keras trains one.
TEST(ModelsAcceptance, BinaryClassifierOnOneSigmoidUnit) {
  auto j = job(nlohmann::json::parse(R"([{"type": "dense", "units": 16, "activation": "relu"}, {"type": "dense", "units": 1, "activation": "sigmoid"}])"),
               {{"type", "sgd"}, {"learning_rate", 0.1}});
  j["loss"] = "binary_crossentropy";
  j["dataset"]["classes"] = 2;
  const scheduler::Workload w = scheduler::parseWorkload(j, "binary.json");
  EXPECT_TRUE(w.loss.labelIsTarget);
  const auto r = runTraining(w, kSteps);
  expectSameLosses(r);
  expectSameAccuracy(r);
}

// The same from a Keras 3 file as Keras writes it (Adam and the loss from its
// compile_config), on generated data: dataset.classes becomes 2.
TEST(ModelsAcceptance, Keras3BinaryClassifierFile) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "shuffle_seed": 7, "examples": 64},
    "training": {"steps": 20, "steps_per_execution": 4}, "ipu": {"arch": "ipu2", "tiles": 16}, "seed": 3})");
  j["model"] = {{"keras", sourcePath("tests/data/keras/binary_classifier_keras3.json")}};
  const scheduler::Workload w = scheduler::parseWorkload(j, "binary.json");
  EXPECT_TRUE(w.loss.labelIsTarget);
  EXPECT_EQ(w.dataset.classes, 2u);
  EXPECT_EQ(w.optimizer.type, "adam");
  const auto r = runTraining(w, kSteps);
  expectSameLosses(r);
  expectSameAccuracy(r);
}

// The user guide's Keras 3 model (Dense 256-128-10 from logits, RMSprop and
// steps_per_execution 10 from its compile_config) on Fashion-MNIST.
TEST(ModelsAcceptance, UserGuideKeras3ModelOnFashionMnist) {
  const auto w = scheduler::loadWorkload(sourcePath("workloads/user_guide_logits.json"));
  EXPECT_EQ(w.optimizer.type, "rmsprop");
  EXPECT_TRUE(w.loss.fromLogits);
  EXPECT_EQ(w.training.stepsPerExecution, 10u);
  expectSameLosses(runTraining(w, kSteps));
}

// The tutorial's MLP as TF 2.x Keras wrote it, on Fashion-MNIST.
TEST(ModelsAcceptance, TutorialTf2KerasModelOnFashionMnist) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/tutorial_mlp_keras.json"));
  const TrainingLosses r = runTraining(w, kSteps);
  expectSameLosses(r);
  // The accuracy counter beside the loss: the device's per-step batch accuracy is the reference's.
  ASSERT_EQ(r.simulatedAccuracy.size(), kSteps);
  for (std::size_t s = 0; s < kSteps; ++s) EXPECT_FLOAT_EQ(r.simulatedAccuracy[s], r.referenceAccuracy[s]) << "step " << s;
}

}  // namespace
}  // namespace ipusim::testing::models_acceptance_test
