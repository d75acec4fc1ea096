// Found by the fifteenth adversarial pass of issue 33 (acceptance 2). Each
// case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace ipusim::test::test_adversarial_pass_15 {
namespace {

// `run --json` and `compile --json` listed the checkpoints asked for while
// the summaries (rightly) said nothing was recomputed: a checkpoint on the
// last layer, or checkpoints that leave nothing to recompute; and a
// checkpoint cutting nothing beside one that cuts was counted ("from 2
// checkpoints"). Both outputs now give what the compiled step recomputes,
// one definition (scheduler::RecomputationSummary), with its op count.
TEST(AdversarialPass15, RecomputationInJsonIsWhatTheStepRecomputes) {
  ScratchDir dir("recompute-json");
  for (const char* checkpoints : {R"(["out"])", R"(["a"])", R"(["a", "b"])"}) {
    const std::string file = checkpointedMlp(dir.path(), "nothing", checkpoints);
    for (const char* command : {" compile ", " run --synthetic-data "}) {
      const nlohmann::json j = jsonOf(runCommand(ipusimBinary() + command + quote(file) + " --json"));
      EXPECT_EQ(j.value("recompute_checkpoints", nlohmann::json()), nlohmann::json::array()) << checkpoints << command;
      EXPECT_EQ(j.value("recomputed_ops", -1), 0) << checkpoints << command;
    }
  }
  const std::string file = checkpointedMlp(dir.path(), "one", R"(["b", "out"])");
  for (const char* command : {" compile ", " run --synthetic-data "}) {
    const nlohmann::json j = jsonOf(runCommand(ipusimBinary() + command + quote(file) + " --json"));
    EXPECT_EQ(j.value("recompute_checkpoints", nlohmann::json()), nlohmann::json{"b"}) << command;
    EXPECT_GT(j.value("recomputed_ops", 0), 0) << command;
  }
  const auto text = runCommand(ipusimBinary() + " run --synthetic-data " + quote(file));
  EXPECT_NE(text.output.find(", recomputing from 1 checkpoint (training.recompute_checkpoints)"), std::string::npos)
      << text.output;
}

// In a pipeline: RecomputeThenBackpropagate over a last stage and a
// one-layer first stage recomputes nothing, yet --json gave its mode; a
// checkpoint on a stage's last layer (where the stage's own cut lies) was
// claimed as "from 1 checkpoint"; one whose segment keeps every value was
// listed silently.
TEST(AdversarialPass15, APipelinesRecomputationInJsonIsWhatTheStepRecomputes) {
  ScratchDir dir("pipeline-recompute-json");
  const auto pipeline = [&](const std::string& name, const std::string& mode, const std::string& checkpoints) {
    const fs::path file = dir.path() / (name + ".json");
    std::ofstream(file) << R"({
      "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 64},
      "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "stage": 0, "name": "a"},
                           {"type": "dense", "units": 8, "activation": "relu", "stage": 0, "name": "b"},
                           {"type": "dense", "units": 8, "activation": "relu", "stage": 1, "name": "c"},
                           {"type": "dense", "units": 4, "activation": "softmax", "stage": 1, "name": "out"}]},
      "optimizer": {"type": "sgd"},
      "pipeline": {"gradient_accumulation_count": 4, "device_mapping": [0, 1], "schedule": "grouped",
                   "recomputation_mode": ")" << mode << R"("},
      "training": {"steps": 8, "steps_per_execution": 4)" << checkpoints << R"(},
      "ipu": {"tiles": 4, "num_ipus": 2}})";
    return file.string();
  };
  // Stage 0 of one layer: nothing to recompute.
  std::string file = pipeline("then", "RecomputeThenBackpropagate", "");
  std::string text = readText(file);
  const std::string b = R"({"type": "dense", "units": 8, "activation": "relu", "stage": 0, "name": "b"},)";
  text.replace(text.find(b), b.size(), "");
  std::ofstream(file) << text;
  nlohmann::json j = jsonOf(runCommand(ipusimBinary() + " compile " + quote(file) + " --json"));
  EXPECT_EQ(j.value("recomputation_mode", nlohmann::json("absent")), nullptr) << j.dump();

  for (const char* checkpoint : {"b", "c"}) {
    file = pipeline(checkpoint, "RecomputeAndBackpropagateInterleaved",
                    std::string(R"(, "recompute_checkpoints": [")") + checkpoint + "\"]");
    j = jsonOf(runCommand(ipusimBinary() + " compile " + quote(file) + " --json"));
    EXPECT_EQ(j.value("recompute_checkpoints", nlohmann::json()), nlohmann::json::array()) << checkpoint;
    EXPECT_EQ(j.value("recomputation_mode", nlohmann::json()), "RecomputeAndBackpropagateInterleaved") << checkpoint;
    const auto r = runCommand(ipusimBinary() + " run --synthetic-data " + quote(file));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find(", recomputing each stage's forward pass (pipeline.recomputation_mode "
                            "RecomputeAndBackpropagateInterleaved)"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(std::string("warning: the recomputation checkpoint at layer '") + checkpoint + "' " +
                            (checkpoint == std::string("b") ? "cuts nothing: it is the last layer of pipeline stage 0"
                                                            : "recomputes nothing")),
              std::string::npos)
        << r.output;
  }
}

// A .npy header giving 'shape' twice was read by its first, while numpy (a
// Python dictionary literal) takes the last: 24 token ids announced (4, 6)
// then (6, 4) trained on 4 examples of 6 ids, where numpy reads 6 of 4.
TEST(AdversarialPass15, ANpyHeaderGivingAKeyTwiceIsRefused) {
  ScratchDir dir("npy-key-twice");
  writeZerosNpy(dir.path() / "ids.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (4, 6), 'shape': (6, 4), }",
                24);
  writeZerosNpy(dir.path() / "labels.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", 4);
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(npyTokenWorkload(dir.path(), 6))),
                (dir.path() / "ids.npy").string() + ": the .npy header gives 'shape' twice (numpy takes the last)");
}

// `evaluate` of a model whose outputs overflow (weights of 1e30) printed
// "loss (mean)      nan (the training diverged)": evaluate trains nothing.
TEST(AdversarialPass15, ANonFiniteEvaluateLossIsNotCalledADivergedTraining) {
  ScratchDir dir("evaluate-nan");
  const fs::path keras = dir.path() / "m.json";
  std::ofstream(keras) << R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
    {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 8], "dtype": "float32", "name": "in"}},
    {"class_name": "Dense", "config": {"name": "d", "units": 8, "activation": "relu",
     "kernel_initializer": {"class_name": "Constant", "config": {"value": 1e30}}}},
    {"class_name": "Dense", "config": {"name": "d1", "units": 4, "activation": "softmax",
     "kernel_initializer": {"class_name": "Constant", "config": {"value": 1e30}}}}]},
    "keras_version": "2.4.0", "backend": "tensorflow"})";
  const fs::path file = dir.path() / "w.json";
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"keras": "m.json"}, "training": {"steps": 2, "steps_per_execution": 2}, "ipu": {"tiles": 4}})";
  const auto r = runCommand(ipusimBinary() + " evaluate " + quote(file.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("loss (mean)      nan (not finite)\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("diverged"), std::string::npos) << r.output;
}

// A pipeline out of memory whose first stage is one dense layer (it keeps
// nothing but its input, which a stage keeps anyway) was told "With
// recomputation (pipeline.recomputation_mode \"Auto\": ...) the step still
// does not fit: ... (+0.0%)", a trial that recomputed no op. It is told so.
TEST(AdversarialPass15, ARecomputationTrialThatRecomputesNothingSaysSo) {
  ScratchDir dir("recompute-trial-nothing");
  const fs::path file = dir.path() / "w.json";
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "input_shape": [64], "classes": 4, "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 256, "activation": "relu", "stage": 0, "name": "a"},
                         {"type": "dense", "units": 4, "activation": "softmax", "stage": 1, "name": "out"}]},
    "optimizer": {"type": "sgd"},
    "pipeline": {"gradient_accumulation_count": 4, "device_mapping": [0, 1], "schedule": "grouped"},
    "training": {"steps": 8, "steps_per_execution": 4},
    "ipu": {"tiles": 2, "num_ipus": 2}})";
  const auto r = runCommand(ipusimBinary() + " compile " + quote(file.string()) + " --set tile.memoryBytes=100000");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("Out of memory in the compiled workload"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("With recomputation (pipeline.recomputation_mode \"Auto\": RecomputeThenBackpropagate) no op "
                          "is recomputed"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("(+0.0%)"), std::string::npos) << r.output;
}

// A sweep point refused by the run flag a --vary name became said
// "--tiles: expected a whole number from 1 to 4294967295, got '0'" for
// `--vary tiles=0`, a flag the user never typed; it names the --vary value.
TEST(AdversarialPass15, ASweepPointsFlagErrorNamesTheVaryValue) {
  ScratchDir dir("sweep-vary-flag");
  const std::string file = checkpointedMlp(dir.path(), "w", R"(["a"])");
  const fs::path out = dir.path() / "sweep";
  const auto r = runCommand(ipusimBinary() + " sweep " + quote(file) + " --vary tiles=0 -j 1 --no-plot -o " +
                            quote(out.string()));
  EXPECT_NE(r.output.find("point 0 (0) failed: --vary tiles=0 (--tiles): expected a whole number from 1 to "),
            std::string::npos)
      << r.output;
  const std::string csv = readText(out / "sweep.csv");
  EXPECT_NE(csv.find("--vary tiles=0 (--tiles)"), std::string::npos) << csv;
}

// `insights` offered recomputation that recomputes nothing on an
// out-of-memory profile: training.recompute_checkpoints "auto" to a flatten
// and two dense layers ("auto" picks the first dense layer, after which
// nothing is recomputed), and pipeline.recomputation_mode "Auto" to a
// pipeline whose first stage is one dense layer. A fit's profile now says
// how many ops "auto" would recompute (meta recompute_auto_ops), and the
// offer needs some; a chain that recomputes still gets it.
TEST(AdversarialPass15, InsightsOfferNoRecomputationThatRecomputesNothing) {
  ScratchDir dir("insights-auto-nothing");
  const auto insights = [&](const std::string& name, const std::string& workloadText, const std::string& memory) {
    const fs::path workload = dir.path() / (name + ".json");
    std::ofstream(workload) << workloadText;
    const fs::path reports = dir.path() / name;
    const auto r = runCommand("POPLAR_ENGINE_OPTIONS='{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" +
                              reports.string() + "\",\"debug.allowOutOfMemory\":\"true\"}' " + ipusimBinary() +
                              " run --synthetic-data " + quote(workload.string()) +
                              " --set tile.memoryBytes=" + memory);
    EXPECT_EQ(r.exitCode, 0) << r.output;
    return runCommand(ipusimBinary() + " insights " + quote(reports.string())).output;
  };
  const std::string flattenFirst = insights("flatten", R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "features": 64, "classes": 10, "examples": 64},
    "model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 32, "activation": "relu"},
                         {"type": "dense", "units": 10, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"}, "training": {"steps": 2, "steps_per_execution": 2}, "ipu": {"tiles": 2}})", "12000");
  EXPECT_NE(flattenFirst.find("over capacity"), std::string::npos) << flattenFirst;
  EXPECT_EQ(flattenFirst.find("recompute"), std::string::npos) << flattenFirst;
  const std::string pipeline = insights("pipeline", R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "input_shape": [64], "classes": 4, "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 256, "activation": "relu", "stage": 0, "name": "a"},
                         {"type": "dense", "units": 4, "activation": "softmax", "stage": 1, "name": "out"}]},
    "optimizer": {"type": "sgd"},
    "pipeline": {"gradient_accumulation_count": 4, "device_mapping": [0, 1], "schedule": "grouped"},
    "training": {"steps": 8, "steps_per_execution": 4}, "ipu": {"tiles": 2, "num_ipus": 2}})", "100000");
  EXPECT_NE(pipeline.find("over capacity"), std::string::npos) << pipeline;
  EXPECT_EQ(pipeline.find("recompute"), std::string::npos) << pipeline;
  std::string chain = R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "input_shape": [64], "classes": 4, "examples": 64},
    "model": {"layers": [)";
  for (int i = 0; i < 6; ++i) chain += R"({"type": "dense", "units": 64, "activation": "relu"}, )";
  chain += R"({"type": "dense", "units": 4, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"}, "training": {"steps": 2, "steps_per_execution": 2}, "ipu": {"tiles": 2}})";
  const std::string recomputing = insights("chain", chain, "20000");
  EXPECT_NE(recomputing.find("(training.recompute_checkpoints: \"auto\")"), std::string::npos) << recomputing;
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_15
