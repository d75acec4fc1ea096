// Fit with validation (training.validation, Keras's fit(validation_data,
// validation_steps, validation_freq) with steps_per_epoch): the validation
// pass compiled beside the training step as its own entry point, run in
// Keras's order and matching the CPU reference's evaluate at each epoch's
// end. One simulation per test (per process).
#include "training_harness.hpp"
#include "validation_harness.hpp"

#include "scheduler/graph/op_graph.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

namespace ipusim::testing::validation_test {
namespace {

// Dropout and batch normalization: the layers whose validation (training=False) differs from training.
nlohmann::json validationJob(nlohmann::json training) {
  nlohmann::json j = smallJob(R"([
      {"type": "flatten"},
      {"type": "dense", "units": 16, "activation": "relu"},
      {"type": "batch_normalization"},
      {"type": "dropout", "rate": 0.4},
      {"type": "dense", "units": 10, "activation": "softmax"}])",
                              {6, 6, 1}, {{"type", "sgd"}, {"learning_rate", 0.1}}, 5);
  j["training"] = std::move(training);
  return j;
}

void expectNear(const std::vector<float>& simulated, const std::vector<float>& reference, const char* what) {
  ASSERT_EQ(simulated.size(), reference.size()) << what;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    ASSERT_TRUE(std::isfinite(simulated[i])) << what << " " << i;
    EXPECT_NEAR(simulated[i], reference[i], 1e-4 * std::fabs(reference[i]) + 1e-6) << what << " " << i;
  }
}

TEST(FitWithValidation, ValidatesAfterEachEpochAsTheReferenceEvaluatesTheWeightsOfThatEpoch) {
  const ValidationResults r = runFitWithValidation(scheduler::parseWorkload(
      validationJob({{"steps", 24}, {"steps_per_execution", 4}, {"steps_per_epoch", 8}, {"validation", {{"steps", 8}}}}),
      "validation.json"));
  // Keras's order: an epoch's training runs, then the validation's (8 steps, 4 a run).
  const std::vector<std::string> epoch{"train", "train", "validation", "validation"};
  std::vector<std::string> expected;
  for (int e = 0; e < 3; ++e) expected.insert(expected.end(), epoch.begin(), epoch.end());
  EXPECT_EQ(r.entries, expected);
  expectNear(r.simulatedLoss, r.referenceLoss, "training loss");
  ASSERT_EQ(r.simulatedValLoss.size(), 24u);
  expectNear(r.simulatedValLoss, r.referenceValLoss, "val_loss");
  expectNear(r.simulatedValAccuracy, r.referenceValAccuracy, "val_accuracy");
  // Each validation reads the same batches, so the losses move only with the weights.
  EXPECT_NE(r.simulatedValLoss[0], r.simulatedValLoss[8]);
  EXPECT_EQ(r.compiled.validationOutfeed, r.compiled.outfeed);
}

TEST(FitWithValidation, ValidationFreqSkipsEpochsAndWithoutFeedsEachStepIsARun) {
  const ValidationResults r = runFitWithValidation(scheduler::parseWorkload(
      validationJob({{"steps", 8}, {"feeds", false}, {"steps_per_epoch", 2},
                     {"validation", {{"steps", 3}, {"freq", 2}}}}),
      "validation.json"));
  std::vector<std::string> expected;
  for (int e = 1; e <= 4; ++e) {
    expected.insert(expected.end(), 2, "train");
    if (e % 2 == 0) expected.insert(expected.end(), 3, "validation");
  }
  EXPECT_EQ(r.entries, expected);
  expectNear(r.simulatedLoss, r.referenceLoss, "training loss");
  expectNear(r.simulatedValLoss, r.referenceValLoss, "val_loss");
  expectNear(r.simulatedValAccuracy, r.referenceValAccuracy, "val_accuracy");
}

TEST(FitWithValidation, APipelineValidatesWithItsForwardPassesAlone) {
  // Two stages on two IPUs, 4 mini-batches per update (Grouped); each validation 8 steps, 4 at a time.
  nlohmann::json j = smallJob(R"([
      {"type": "flatten", "stage": 0},
      {"type": "dense", "units": 16, "activation": "relu", "stage": 0},
      {"type": "dense", "units": 10, "activation": "softmax", "stage": 1}])",
                              {6, 6, 1}, {{"type", "sgd"}, {"learning_rate", 0.1}}, 5);
  j["ipu"]["num_ipus"] = 2;
  j["pipeline"] = {{"gradient_accumulation_count", 4}, {"schedule", "grouped"}};
  j["training"] = {{"steps", 24}, {"steps_per_execution", 8}, {"steps_per_epoch", 8}, {"validation", {{"steps", 8}}}};
  const ValidationResults r = runFitWithValidation(scheduler::parseWorkload(j, "pipelined.json"));
  std::vector<std::string> expected;
  for (int e = 0; e < 3; ++e) expected.insert(expected.end(), {"train", "validation"});
  EXPECT_EQ(r.entries, expected);
  // One reference loss per update of 4 mini-batches: their mean (the mini-batches of one update share its weights).
  ASSERT_EQ(r.simulatedLoss.size(), 24u);
  ASSERT_EQ(r.referenceLoss.size(), 6u);
  for (std::size_t u = 0; u < 6; ++u) {
    double mean = 0;
    for (std::size_t i = 0; i < 4; ++i) mean += r.simulatedLoss[u * 4 + i] / 4;
    EXPECT_NEAR(mean, r.referenceLoss[u], 1e-4 * std::fabs(r.referenceLoss[u])) << "update " << u;
  }
  expectNear(r.simulatedValLoss, r.referenceValLoss, "val_loss");
  expectNear(r.simulatedValAccuracy, r.referenceValAccuracy, "val_accuracy");
  ASSERT_EQ(r.compiled.exe.entryPoints.size(), 2u);
  EXPECT_EQ(r.compiled.exe.entryPoints[1].name, "validation");
}

TEST(FitWithValidation, APipelinedValidationRunsWholeGroupsOfMiniBatches) {
  nlohmann::json j = smallJob(R"([
      {"type": "flatten", "stage": 0}, {"type": "dense", "units": 10, "activation": "softmax", "stage": 1}])",
                              {6, 6, 1}, {{"type", "sgd"}, {"learning_rate", 0.1}}, 5);
  j["ipu"]["num_ipus"] = 2;
  j["pipeline"] = {{"gradient_accumulation_count", 4}, {"schedule", "grouped"}};
  j["training"] = {{"steps", 8}, {"steps_per_execution", 8}, {"validation", {{"steps", 6}}}};
  try {
    scheduler::compile(scheduler::parseWorkload(j, "pipelined.json"));
    FAIL() << "6 validation steps in groups of 4 were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("training.validation.steps: 6 must be a multiple of "
                                         "pipeline.gradient_accumulation_count (4)"),
              std::string::npos)
        << e.what();
  }
}

// Compile only: the programs an entry point reaches, by name, in order.
std::vector<std::string> reachable(const ir::Executable& exe, const std::string& entry) {
  std::vector<std::string> names;
  std::function<void(ir::Id)> walk = [&](ir::Id id) {
    const ir::Program& p = exe.programs.at(id);
    names.push_back(p.name + " " + p.debug.layer + "/" + p.debug.op);
    for (ir::Id child : p.children) walk(child);
  };
  for (const auto& e : exe.entryPoints)
    if (e.name == entry) walk(e.program);
  return names;
}

TEST(FitWithValidation, TheValidationPassIsEvaluatesForwardAloneAndLeavesTheTrainingStepAsItWas) {
  const nlohmann::json training = {{"steps", 8}, {"steps_per_execution", 4}};
  nlohmann::json withValidation = training;
  withValidation["validation"] = {{"steps", 4}};
  const scheduler::Workload plain = scheduler::parseWorkload(validationJob(training), "plain.json");
  const scheduler::Workload validating = scheduler::parseWorkload(validationJob(withValidation), "validation.json");

  // The op graph: after the training step, a pass with no gradient and no update.
  const scheduler::OpGraph g = scheduler::buildTrainingGraph(validating);
  ASSERT_LT(g.firstValidationOp, g.ops.size());
  std::set<std::string> kinds;
  for (std::size_t op = g.firstValidationOp; op < g.ops.size(); ++op) {
    kinds.insert(scheduler::toString(g.ops[op].kind));
    for (std::size_t out : g.ops[op].outputs)
      EXPECT_NE(g.values[out].kind, scheduler::ValueKind::Gradient) << g.ops[op].name;
    EXPECT_EQ(g.ops[op].name.rfind("validation/", 0), 0u) << g.ops[op].name;
  }
  EXPECT_EQ(kinds.count("SgdUpdate") + kinds.count("Dropout") + kinds.count("BatchNormStatistics"), 0u);
  EXPECT_EQ(kinds.count("BatchNormInvStdDev"), 1u);  // the moving statistics, as evaluate reads them

  const scheduler::CompiledWorkload a = scheduler::compile(plain), b = scheduler::compile(validating);
  ASSERT_EQ(b.exe.entryPoints.size(), 2u);
  EXPECT_EQ(b.exe.entryPoints[1].name, "validation");
  // The training step runs the same programs, in the same order, with or without validation.
  EXPECT_EQ(reachable(b.exe, "train"), reachable(a.exe, "train"));
  EXPECT_EQ(b.report.estimatedStepCycles, a.report.estimatedStepCycles);
  EXPECT_GT(b.report.estimatedValidationStepCycles, 0u);
  EXPECT_LT(b.report.estimatedValidationStepCycles, b.report.estimatedStepCycles / 2);
  // The validation entry point: its streams' copies and the pass's ops, nothing of the training's.
  const std::vector<std::string> validation = reachable(b.exe, "validation");
  ASSERT_FALSE(validation.empty());
  for (const std::string& name : validation)
    EXPECT_TRUE(name.find("validation") != std::string::npos) << name;
  EXPECT_EQ(b.exe.streams.at(b.validationImagesStream).name, "validation_images");
  EXPECT_EQ(b.exe.streams.at(b.validationLabelsStream).name, "validation_labels");
  EXPECT_EQ(b.exe.streams.at(b.validationLossStream).name, "validation_loss");
  EXPECT_EQ(b.validationStepsPerRun, 4u);
}

TEST(FitWithValidation, ItsKeysAreCheckedByName) {
  auto error = [](nlohmann::json training, nlohmann::json dataset = nullptr) {
    if (!training.contains("steps_per_execution")) training["steps_per_execution"] = 4;
    nlohmann::json j = validationJob(std::move(training));
    if (!dataset.is_null()) j["dataset"].update(dataset);
    try {
      scheduler::parseWorkload(j, "v.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({{"steps", 24}, {"steps_per_execution", 4}, {"steps_per_epoch", 6}})
                .find("training.steps_per_epoch: 6 must be a multiple of steps_per_execution (4)"),
            std::string::npos);
  EXPECT_NE(error({{"steps", 24}, {"steps_per_execution", 4}, {"steps_per_epoch", 16}})
                .find("dividing training.steps (24)"),
            std::string::npos);
  EXPECT_NE(error({{"steps", 8}, {"steps_per_execution", 4}, {"validation", {{"steps", 6}}}})
                .find("training.validation.steps: 6 must be a multiple of training.steps_per_execution (4), or less than it"),
            std::string::npos);
  EXPECT_NE(error({{"steps", 8}, {"validation", {{"freq", 2}}}}).find("training.validation.steps: missing"),
            std::string::npos);
  EXPECT_NE(error({{"steps", 8}, {"validation", {{"steps", 2}, {"images", "x.gz"}}}})
                .find("training.validation.images: synthetic data draws its validation examples"),
            std::string::npos);
  EXPECT_NE(error({{"steps", 8}, {"validation", {{"steps", 2}, {"split", 0.1}}}}).find("split"), std::string::npos);
  // Another IDX training set has no default validation data.
  const std::string images = scheduler::kFashionMnistTestImages, labels = scheduler::kFashionMnistTestLabels;
  EXPECT_NE(error({{"steps", 8}, {"validation", {{"steps", 2}}}},
                  {{"format", "idx"}, {"images", images}, {"labels", labels}, {"input_shape", {28, 28, 1}}})
                .find("training.validation.images: missing"),
            std::string::npos);
  // The default training set's default: its test set.
  nlohmann::json fashion = validationJob({{"steps", 8}, {"steps_per_execution", 4}, {"validation", {{"steps", 2}}}});
  fashion["dataset"] = {{"batch_size", 4}, {"input_shape", {28, 28, 1}}};
  const scheduler::Workload w = scheduler::parseWorkload(fashion, "v.json");
  EXPECT_EQ(w.training.validation.images, images);
  EXPECT_EQ(w.training.validation.labels, labels);
}

}  // namespace
}  // namespace ipusim::testing::validation_test
