// Metrics beside the loss (issue "The whole Keras file": compile_config
// metrics): mae and mse computed on the device for the first output and
// outfed, against the CPU reference within 1e-4 every step, under a
// regression, a categorical and a binary loss; the accuracy variants that
// fit the loss are its accuracy; a compile_config's metrics are read (and a
// workload's `metrics` wins); metrics that are not modelled, or do not fit
// the loss, are refused by name.
#include "training_harness.hpp"

#include "scheduler/compiler.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace ipusim::testing::metrics_test {
namespace {

constexpr std::uint64_t kSteps = 20;
const nlohmann::json kSgd = {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}};

nlohmann::json job(const char* layers, const char* loss, const char* metrics) {
  nlohmann::json j = smallJob(layers, {12}, kSgd, 6);
  j["loss"] = nlohmann::json::parse(loss);
  j["metrics"] = nlohmann::json::parse(metrics);
  return j;
}

// Every metric outfed each step, within 1e-4 (or 1e-6 absolute) of the reference's.
void expectSameMetrics(const TrainingLosses& r, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const auto sim = r.simulatedMetrics.find(name), ref = r.referenceMetrics.find(name);
    ASSERT_NE(sim, r.simulatedMetrics.end()) << name << " not outfed";
    ASSERT_NE(ref, r.referenceMetrics.end()) << name;
    ASSERT_EQ(sim->second.size(), kSteps) << name;
    ASSERT_EQ(ref->second.size(), kSteps) << name;
    for (std::size_t s = 0; s < kSteps; ++s)
      EXPECT_NEAR(sim->second[s], ref->second[s], 1e-6 + 1e-4 * std::fabs(ref->second[s])) << name << " step " << s;
  }
}

TEST(Metrics, MaeAndMseOfARegression) {
  const nlohmann::json j = job(R"([{"type": "dense", "units": 16, "activation": "tanh"}, {"type": "dense", "units": 3}])",
                               R"("mean_squared_error")", R"(["mae", "mse"])");
  const scheduler::Workload w = scheduler::parseWorkload(j, "regression.json");
  EXPECT_EQ(w.loss.metrics, (std::vector<std::string>{"mean_absolute_error", "mean_squared_error"}));
  const TrainingLosses r = runTraining(w, kSteps);
  expectSameLosses(r, kSteps);
  expectSameMetrics(r, w.loss.metrics);
  // The mse metric of an mse loss is the loss itself.
  for (std::size_t s = 0; s < kSteps; ++s)
    EXPECT_NEAR(r.simulatedMetrics.at("mean_squared_error")[s], r.simulated[s], 1e-6 * r.simulated[s]) << s;
}

TEST(Metrics, OfCategoricalProbabilities) {
  const nlohmann::json j = job(R"([{"type": "dense", "units": 16, "activation": "relu"},
                                   {"type": "dense", "units": 10, "activation": "softmax"}])",
                               R"({"type": "categorical_crossentropy", "label_smoothing": 0.1})",
                               R"(["accuracy", "categorical_accuracy", {"class_name": "MeanSquaredError", "config": {}}, "mae"])");
  const scheduler::Workload w = scheduler::parseWorkload(j, "categorical.json");
  EXPECT_EQ(w.loss.metrics, (std::vector<std::string>{"mean_squared_error", "mean_absolute_error"}));
  const TrainingLosses r = runTraining(w, kSteps);
  expectSameLosses(r, kSteps);
  expectSameMetrics(r, w.loss.metrics);
}

TEST(Metrics, OfABinaryClassifier) {
  nlohmann::json j = job(R"([{"type": "dense", "units": 8, "activation": "relu"}, {"type": "dense", "units": 1, "activation": "sigmoid"}])",
                         R"("binary_crossentropy")", R"(["binary_accuracy", "mse"])");
  j["dataset"]["classes"] = 2;
  const scheduler::Workload w = scheduler::parseWorkload(j, "binary.json");
  const TrainingLosses r = runTraining(w, kSteps);
  expectSameLosses(r, kSteps);
  expectSameMetrics(r, w.loss.metrics);
}

TEST(Metrics, ReadFromTheCompileConfig) {
  nlohmann::json keras = nlohmann::json::parse(std::ifstream(sourcePath("tests/data/keras/binary_classifier_keras3.json")));
  keras["compile_config"]["metrics"] = {"accuracy", "mae"};
  keras["compile_config"]["weighted_metrics"] = {{{"module", "keras.metrics"}, {"class_name", "MeanSquaredError"}, {"config", {{"name", "mse"}}}}};
  const std::string file = ::testing::TempDir() + "metrics_keras3.json";
  std::ofstream(file) << keras.dump();
  nlohmann::json j = smallJob("[]", nullptr, kSgd, 1);
  j["dataset"].erase("input_shape");
  j["dataset"].erase("classes");  // a binary classifier: 2, its default
  j["model"] = {{"keras", file}};
  EXPECT_EQ(scheduler::parseWorkload(j, "keras.json").loss.metrics,
            (std::vector<std::string>{"mean_absolute_error", "mean_squared_error"}));
  j["metrics"] = nlohmann::json::array({"mse"});  // the workload's win
  EXPECT_EQ(scheduler::parseWorkload(j, "keras.json").loss.metrics, std::vector<std::string>{"mean_squared_error"});
  // Metrics ipusim does not compute (a real file's Precision, Recall, AUC): trained all the same, with a warning.
  keras["compile_config"]["metrics"] = {"accuracy", {{"module", "keras.metrics"}, {"class_name", "Precision"}, {"config", {}}}, "AUC"};
  std::ofstream(file) << keras.dump();
  j.erase("metrics");
  const scheduler::Workload w = scheduler::parseWorkload(j, "keras.json");
  EXPECT_EQ(w.loss.unmodelledMetrics, (std::vector<std::string>{"Precision", "AUC"}));
  const scheduler::CompiledWorkload c = scheduler::compile(w);
  ASSERT_EQ(c.report.warnings.size(), 1u);
  EXPECT_NE(c.report.warnings[0].find("metrics not computed: Precision, AUC"), std::string::npos) << c.report.warnings[0];
}

std::string errorOf(const char* loss, const char* metrics) {
  try {
    scheduler::parseWorkload(job(R"([{"type": "dense", "units": 10, "activation": "softmax"}])", loss, metrics), "bad.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Metrics, ThoseThatDoNotFitAreNamed) {
  const std::string binary = errorOf(R"("sparse_categorical_crossentropy")", R"(["binary_accuracy"])");
  EXPECT_NE(binary.find("'binary_accuracy' does not fit sparse_categorical_crossentropy"), std::string::npos) << binary;
  const std::string indices = errorOf(R"("sparse_categorical_crossentropy")", R"(["mae"])");
  EXPECT_NE(indices.find("labels are class indices"), std::string::npos) << indices;
  const std::string regression = errorOf(R"("mean_squared_error")", R"(["accuracy"])");
  EXPECT_NE(regression.find("'accuracy' is an accuracy, which mean_squared_error outfeeds none of"), std::string::npos) << regression;
  const std::string notList = errorOf(R"("mean_squared_error")", R"("mae")");
  EXPECT_NE(notList.find("metrics: expected a list of metrics"), std::string::npos) << notList;
}

}  // namespace
}  // namespace ipusim::testing::metrics_test
