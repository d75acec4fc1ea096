// Fit with validation through `ipusim run` (workloads/mnist_with_validation.json
// on Fashion-MNIST, its test set the validation data): the profile holds the
// training and validation runs in Keras's order and both loss tracks, the
// training itself is the one without validation, and the run's summary, the
// report and the profile agree on the validation's figures.
#include "cli_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

namespace ipusim::test::test_fit_with_validation {
namespace {

namespace fs = std::filesystem;

// 100 steps in runs of 25: epochs of 50 steps, each followed by a validation of 25 steps (one run).
const std::string kShortRun = " --steps 100 --workload-set training.steps_per_epoch=50 "
                              "--workload-set training.validation.steps=25";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::vector<std::string> query(const fs::path& profile, const std::string& sql) {
  const CommandResult q = runCommand("sqlite3 " + quote(profile.string()) + " " + quote(sql));
  EXPECT_EQ(q.exitCode, 0) << q.output;
  return lines(q.output);
}

TEST(FitWithValidation, TheProfileInterleavesTrainingAndValidationRunsAndHoldsBothLossTracks) {
  ScratchDir dir("fit-validation");
  const CommandResult run = runCommand(autoReport(dir.path()) + ipusimBinary() + " run " +
                                       quote(sourcePath("workloads/mnist_with_validation.json")) + kShortRun + " --json");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const fs::path profile = dir.path() / "profile.pop";
  EXPECT_EQ(query(profile, "SELECT name || ' ' || steps FROM runs ORDER BY id"),
            (std::vector<std::string>{"train 25", "train 25", "validation 25", "train 25", "train 25", "validation 25"}));
  EXPECT_EQ(query(profile, "SELECT t.name || ' ' || count(*) FROM counters c JOIN tracks t ON t.id = c.track_id "
                           "GROUP BY t.name ORDER BY t.name"),
            (std::vector<std::string>{"accuracy 100", "loss 100", "val_accuracy 50", "val_loss 50"}));
  // Each validation's values lie inside its run.
  EXPECT_EQ(query(profile, "SELECT count(*) FROM counters c JOIN tracks t ON t.id = c.track_id JOIN runs r "
                           "ON r.id = c.run_id WHERE t.name = 'val_loss' AND r.name = 'validation' "
                           "AND c.ts BETWEEN r.start_cycle AND r.end_cycle"),
            std::vector<std::string>{"50"});
  EXPECT_EQ(query(profile, "SELECT name FROM slices WHERE name LIKE 'Engine::run #2%'"),
            std::vector<std::string>{"Engine::run #2 validation"});

  // The summary's validation figures: the last validation's means, as the profile holds its values.
  const nlohmann::json summary = nlohmann::json::parse(run.output.substr(run.output.find('{')));
  ASSERT_TRUE(summary["validation"].is_object()) << run.output;
  EXPECT_EQ(summary["validation"]["validations"], 2);
  EXPECT_EQ(summary["validation"]["steps_each"], 25);
  EXPECT_EQ(summary["validation"]["every_steps"], 50);
  const std::vector<std::string> last = query(
      profile, "SELECT printf('%.17g', avg(value)) FROM (SELECT c.value FROM counters c JOIN tracks t ON t.id = c.track_id "
               "WHERE t.name = 'val_loss' ORDER BY c.ts DESC LIMIT 25)");
  ASSERT_EQ(last.size(), 1u);
  EXPECT_NEAR(summary["validation"]["last"]["val_loss"].get<double>(), std::stod(last[0]), 1e-6);
  // Fashion-MNIST's test set after 50 and 100 steps of the tutorial's training: learning, not chance.
  EXPECT_GT(summary["validation"]["last"]["val_accuracy"].get<double>(), 0.4);
  EXPECT_LT(summary["validation"]["last"]["val_loss"].get<double>(), 2.0);

  const CommandResult report = runCommand(ipusimBinary() + " report " + quote(profile.string()));
  ASSERT_EQ(report.exitCode, 0) << report.output;
  EXPECT_NE(report.output.find("by entry point: train 4 runs (100 steps), validation 2 runs (50 steps)"),
            std::string::npos) << report.output;
  EXPECT_NE(report.output.find("Val loss  50 samples"), std::string::npos) << report.output;
  const CommandResult json = runCommand(ipusimBinary() + " report --json " + quote(profile.string()));
  ASSERT_EQ(json.exitCode, 0) << json.output;
  const nlohmann::json r = nlohmann::json::parse(json.output);
  EXPECT_EQ(r["val_loss"]["samples"], 50);
  EXPECT_EQ(r["runs"]["by_entry_point"][1]["entry_point"], "validation");
  // Throughput has one definition: the training's examples over the whole job's time (validation included).
  const CommandResult compare =
      runCommand(ipusimBinary() + " compare --json " + quote(profile.string()) + " " + quote(profile.string()));
  ASSERT_EQ(compare.exitCode, 0) << compare.output;
  const nlohmann::json c = nlohmann::json::parse(compare.output);
  EXPECT_NEAR(c["a"]["throughput_examples_per_second"].get<double>(), summary["examples_per_second"].get<double>(),
              1e-6 * summary["examples_per_second"].get<double>());
}

TEST(FitWithValidation, TheTrainingIsTheOneWithoutValidation) {
  // The same model, data and steps in runs of 25, without validation: every training loss bit for bit.
  ScratchDir with("fit-with-validation"), without("fit-without-validation");
  const CommandResult a = runCommand(autoReport(with.path()) + ipusimBinary() + " run " +
                                     quote(sourcePath("workloads/mnist_with_validation.json")) + kShortRun);
  ASSERT_EQ(a.exitCode, 0) << a.output;
  const CommandResult b = runCommand(autoReport(without.path()) + ipusimBinary() + " run " +
                                     quote(sourcePath("workloads/mnist_with_feeds.json")) +
                                     " --steps 100 --steps-per-execution 25");
  ASSERT_EQ(b.exitCode, 0) << b.output;
  const std::vector<std::string> losses = profileLosses(with.path() / "profile.pop");
  ASSERT_EQ(losses.size(), 100u);
  EXPECT_EQ(losses, profileLosses(without.path() / "profile.pop"));
}

TEST(FitWithValidation, ValidationStepsBeyondTheValidationDataAreRefusedByName) {
  const CommandResult run = runCommand(ipusimBinary() + " run " + quote(sourcePath("workloads/mnist_with_validation.json")) +
                                       " --steps 50 --workload-set training.steps_per_epoch=50"
                                       " --workload-set training.validation.steps=400");
  EXPECT_NE(run.exitCode, 0);
  EXPECT_NE(run.output.find("training.validation.steps: 400 batches of 32 examples need more than the 10000 examples "
                            "of the validation data"),
            std::string::npos) << run.output;
}

}  // namespace
}  // namespace ipusim::test::test_fit_with_validation
