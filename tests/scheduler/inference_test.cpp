// Evaluate and predict (Workload::task, issue "Inference"): forward-only
// programs compiled without a gradient op, layers as Keras calls them with
// training=False (dropout and noise pass their input, batch normalization
// reads its moving statistics), matching the CPU reference's inference on the
// same weights and batches. One simulation per test (per process).
#include "inference_harness.hpp"
#include "training_harness.hpp"

#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace ipusim::testing::inference_test {
namespace {

using scheduler::Task;

// A small convolutional classifier with batch normalization, dropout and
// Gaussian noise: every layer whose training=False behaviour differs.
nlohmann::json inferenceJob(const char* task) {
  nlohmann::json j = smallJob(R"([
      {"type": "conv2d", "filters": 4, "kernel_size": 3, "activation": "relu"},
      {"type": "batch_normalization"},
      {"type": "gaussian_noise", "stddev": 0.3},
      {"type": "flatten"},
      {"type": "dense", "units": 16, "activation": "relu"},
      {"type": "dropout", "rate": 0.5},
      {"type": "dense", "units": 10, "activation": "softmax"}])",
                              {6, 6, 1}, {{"type", "sgd"}, {"learning_rate", 0.05}}, 11);
  j["task"] = task;
  j["dataset"]["examples"] = 16;  // 4 batches: 8 steps read the dataset twice
  j["training"] = {{"steps", 8}, {"steps_per_execution", 4}};
  return j;
}

TEST(Inference, EvaluateMatchesTheReferencesInferenceWithDropoutNoiseAndBatchNorm) {
  const InferenceResults r = runInference(scheduler::parseWorkload(inferenceJob("evaluate"), "evaluate.json"), 8);
  ASSERT_EQ(r.simulatedLoss.size(), 8u);
  ASSERT_EQ(r.referenceLoss.size(), 8u);
  for (std::size_t s = 0; s < 8; ++s) {
    ASSERT_TRUE(std::isfinite(r.simulatedLoss[s])) << "batch " << s;
    EXPECT_NEAR(r.simulatedLoss[s], r.referenceLoss[s], 1e-4 * std::fabs(r.referenceLoss[s])) << "batch " << s;
    EXPECT_EQ(r.simulatedAccuracy[s], r.referenceAccuracy[s]) << "batch " << s;
  }
  // No weight changes between batches: the same examples give the same loss
  // (16 examples, 8 batches of 4: the dataset in its order, twice).
  for (std::size_t s = 0; s < 4; ++s) EXPECT_EQ(r.simulatedLoss[s], r.simulatedLoss[s + 4]) << "batch " << s;
}

TEST(Inference, PredictMatchesTheReferencesOutputsWithTheSoftmaxApplied) {
  const InferenceResults r = runInference(scheduler::parseWorkload(inferenceJob("predict"), "predict.json"), 8);
  EXPECT_EQ(r.compiled.predictionWidth, 10u);
  ASSERT_EQ(r.simulatedPredictions.size(), 8u * 4 * 10);
  ASSERT_EQ(r.referencePredictions.size(), r.simulatedPredictions.size());
  for (std::size_t i = 0; i < r.simulatedPredictions.size(); ++i)
    ASSERT_NEAR(r.simulatedPredictions[i], r.referencePredictions[i], 1e-6 + 1e-4 * std::fabs(r.referencePredictions[i]))
        << "value " << i;
  // Probabilities: each row sums to 1.
  for (std::size_t row = 0; row < 32; ++row) {
    double sum = 0;
    for (std::size_t c = 0; c < 10; ++c) sum += r.simulatedPredictions[row * 10 + c];
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << row;
  }
}

// Compile-only (no simulation): what the tutorial's model compiles to for each task.
scheduler::CompiledWorkload compiledFor(Task task) {
  scheduler::Workload w = scheduler::loadWorkload(sourcePath("workloads/mnist_with_feeds.json"));
  w.task = task;
  return scheduler::compile(w);
}

bool hasTensorOfCategory(const scheduler::CompiledWorkload& c, const std::string& category) {
  return std::any_of(c.exe.tensors.begin(), c.exe.tensors.end(), [&](const ir::Tensor& t) { return t.category == category; });
}

bool hasGradientOrUpdateProgram(const scheduler::CompiledWorkload& c) {
  return std::any_of(c.exe.programs.begin(), c.exe.programs.end(), [](const ir::Program& p) {
    const std::string& op = p.debug.op;
    return op.find("grad") != std::string::npos || (op.size() > 7 && op.compare(op.size() - 7, 7, "_update") == 0);
  });
}

TEST(Inference, PredictCompilesNoGradientOpAndNeedsLessMemoryAndCyclesThanTraining) {
  const scheduler::CompiledWorkload fit = compiledFor(Task::Fit);
  const scheduler::CompiledWorkload predict = compiledFor(Task::Predict);
  const scheduler::CompiledWorkload evaluate = compiledFor(Task::Evaluate);
  // The training step has them (else the checks below could not fail).
  ASSERT_TRUE(hasTensorOfCategory(fit, "gradients"));
  ASSERT_TRUE(hasGradientOrUpdateProgram(fit));
  for (const auto* c : {&predict, &evaluate}) {
    EXPECT_FALSE(hasTensorOfCategory(*c, "gradients"));
    EXPECT_FALSE(hasTensorOfCategory(*c, "optimizer"));
    EXPECT_FALSE(hasGradientOrUpdateProgram(*c));
    // The fullest tile's peak is the first product's gathered blocks, which
    // inference needs too (7,392 bytes against 7,416); the tiles on average
    // hold less: no gradient, no backward temporaries.
    EXPECT_LE(c->report.maxTileBytes, fit.report.maxTileBytes);
    EXPECT_LT(c->report.meanTileBytes, fit.report.meanTileBytes);
    // Forward alone is about a third of a training step's work (backward is two products per product).
    EXPECT_LT(c->report.estimatedStepCycles, fit.report.estimatedStepCycles / 2);
  }
  EXPECT_EQ(predict.exe.entryPoints.at(0).name, "predict");
  EXPECT_EQ(evaluate.exe.entryPoints.at(0).name, "evaluate");
  EXPECT_EQ(predict.labelsStream, ir::kNoId);
  EXPECT_EQ(predict.exe.streams.at(predict.lossStream).name, "predictions");
  EXPECT_EQ(predict.predictionWidth, 10u);
  EXPECT_EQ(predict.exe.streams.at(predict.lossStream).elementsPerCopy, 32u * 10);
  EXPECT_EQ(evaluate.outfeed, fit.outfeed);
}

TEST(Inference, TheTaskIsAWorkloadKeyCheckedAgainstTheOutfeed) {
  nlohmann::json j = inferenceJob("predict");
  EXPECT_EQ(scheduler::parseWorkload(j, "w.json").task, Task::Predict);
  j["task"] = "train";
  try {
    scheduler::parseWorkload(j, "w.json");
    FAIL() << "task 'train' was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("task"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("predict"), std::string::npos) << e.what();
  }
  j["task"] = "predict";
  j["training"]["outfeed"] = {{"mode", "LAST"}};
  try {
    scheduler::parseWorkload(j, "w.json");
    FAIL() << "predict with outfeed mode LAST was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("w.json: training.outfeed.mode: LAST"), std::string::npos) << e.what();
  }
}

// The inference job pipelined over two IPUs, four mini-batches in flight
// (dropout and noise are not pipelined).
nlohmann::json pipelinedJob(const char* task, const char* schedule) {
  nlohmann::json j = inferenceJob(task);
  j["model"]["layers"].erase(5);
  j["model"]["layers"].erase(2);
  j["model"]["layers"][0]["stage"] = 0;
  for (std::size_t i = 1; i < j["model"]["layers"].size(); ++i) j["model"]["layers"][i]["stage"] = 1;
  j["ipu"]["num_ipus"] = 2;
  j["pipeline"] = {{"gradient_accumulation_count", 4}, {"schedule", schedule}};
  return j;
}

TEST(Inference, PipelinedPredictRunsTheForwardPassesAloneAndMatchesTheReference) {
  const scheduler::Workload w = scheduler::parseWorkload(pipelinedJob("predict", "grouped"), "predict.json");
  const InferenceResults r = runInference(w, 8);
  // Two stages, four mini-batches: Grouped's forward slots alone, five time
  // steps (the ramp-down of backward passes gone), no gradient, no update.
  std::size_t timeSteps = 0;
  for (const ir::Program& p : r.compiled.exe.programs) {
    timeSteps += p.name.rfind("time step ", 0) == 0;
    EXPECT_EQ(p.name.find("B1("), std::string::npos) << p.name;
    EXPECT_NE(p.name, "apply_gradients");
  }
  EXPECT_EQ(timeSteps, 5u);
  EXPECT_EQ(r.compiled.exe.entryPoints.at(0).name, "predict");
  ASSERT_EQ(r.simulatedPredictions.size(), 8u * 4 * 10);
  ASSERT_EQ(r.referencePredictions.size(), r.simulatedPredictions.size());
  for (std::size_t i = 0; i < r.simulatedPredictions.size(); ++i)
    ASSERT_NEAR(r.simulatedPredictions[i], r.referencePredictions[i], 1e-6 + 1e-4 * std::fabs(r.referencePredictions[i]))
        << "value " << i;
}

TEST(Inference, PipelinedEvaluateInterleavedMatchesTheReference) {
  const InferenceResults r =
      runInference(scheduler::parseWorkload(pipelinedJob("evaluate", "interleaved"), "evaluate.json"), 8);
  ASSERT_EQ(r.simulatedLoss.size(), 8u);
  for (std::size_t s = 0; s < 8; ++s) {
    EXPECT_NEAR(r.simulatedLoss[s], r.referenceLoss[s], 1e-4 * std::fabs(r.referenceLoss[s])) << "batch " << s;
    EXPECT_EQ(r.simulatedAccuracy[s], r.referenceAccuracy[s]) << "batch " << s;
  }
}

}  // namespace
}  // namespace ipusim::testing::inference_test
