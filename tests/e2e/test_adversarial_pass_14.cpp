// Found by the fourteenth adversarial pass of issue 33 (acceptance 2). Each
// case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace ipusim::test::test_adversarial_pass_14 {
namespace {

const char* const kPass14Workload = R"({
  "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
  "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "name": "a"},
                       {"type": "dense", "units": 4, "activation": "softmax", "name": "out"}]},
  "optimizer": {"type": "sgd"},
  "training": {"steps": 2, "steps_per_execution": 2},
  "ipu": {"tiles": 4}})";

// A sweep's failed point named "--workload-set", a flag the user never
// typed: `--vary steps=3` became `--workload-set training.steps=3` in the
// child; an assignment error named neither file nor flag. Both name the
// --vary values now.
TEST(AdversarialPass14, ASweepPointsErrorNamesTheVaryValuesNotWorkloadSet) {
  ScratchDir dir("sweep-vary-source");
  const fs::path file = dir.path() / "w.json";
  std::ofstream(file) << kPass14Workload;
  const fs::path out = dir.path() / "sweep";
  const auto r = runCommand(ipusimBinary() + " sweep " + quote(file.string()) +
                            " --vary steps=3 --vary tiles=4 -j 1 --no-plot -o " + quote(out.string()));
  EXPECT_NE(r.output.find(file.string() + " with --vary steps=3: training.steps: 3 must be a multiple of "
                                          "training.steps_per_execution (2)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("--workload-set"), std::string::npos) << r.output;
  // An assignment the workload cannot take said "workload assignment" alone.
  const auto s = runCommand(ipusimBinary() + " sweep " + quote(file.string()) +
                            " --vary training.steps.x=3 -j 1 --no-plot -o " + quote(out.string()));
  EXPECT_NE(s.output.find(file.string() + " with --vary training.steps.x=3: workload assignment "
                                          "'training.steps.x=3': 'training.steps' is not an object"),
            std::string::npos)
      << s.output;
}

// A key given twice in one object kept the last value silently in Keras
// model files (a Dense's second "units"), serialized graphs, engine options,
// --workload-set values, and in a workload read with --workload-set (the
// workload reader's own check was bypassed there: {"steps": 2, "steps": 4}
// trained 4 steps). Each is refused naming the file and the key's path.
TEST(AdversarialPass14, AKeyGivenTwiceIsRefusedInKerasFilesGraphsAndOptions) {
  ScratchDir dir("duplicate-keys");
  const fs::path keras = dir.path() / "model.json";
  std::ofstream(keras) << R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
    {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 8], "dtype": "float32", "name": "in"}},
    {"class_name": "Dense", "config": {"name": "d", "units": 16, "units": 8, "activation": "relu"}},
    {"class_name": "Dense", "config": {"name": "d1", "units": 4, "activation": "softmax"}}]},
    "keras_version": "2.4.0", "backend": "tensorflow"})";
  const std::string twice = ": given twice in one object (JSON keeps only the last); expected each key once";
  expectRefusal(runCommand(ipusimBinary() + " run --synthetic-data --keras " + quote(keras.string())),
                keras.string() + ": config.layers[].config.units" + twice);

  // The same model as a .keras archive's config.json, which the error names.
  const fs::path archive = dir.path() / "m.keras";
  std::ofstream(archive, std::ios::binary) << storedZip({{"config.json", readText(keras)}, {"metadata.json", "{}"}});
  expectRefusal(runCommand(ipusimBinary() + " run --synthetic-data --keras " + quote(archive.string())),
                archive.string() + ": config.json: config.layers[].config.units" + twice);

  // A Keras file a workload names.
  const fs::path named = dir.path() / "named.json";
  std::ofstream(named) << R"({"dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4,
    "examples": 16}, "model": {"keras": "model.json"}, "training": {"steps": 2, "steps_per_execution": 2},
    "ipu": {"tiles": 4}})";
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(named.string())),
                "model.json: config.layers[].config.units" + twice);

  // A serialized graph.
  const fs::path graph = dir.path() / "graph.json";
  std::string text = readText(kGraph);
  ASSERT_EQ(text.substr(0, 1), "{");
  std::ofstream(graph) << "{\"version\": 1," << text.substr(1);  // the file gives "version": 1 too
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(graph.string())),
                "executable '" + graph.string() + "': version" + twice);

  // A workload with a key twice, read with --workload-set.
  const fs::path workload = dir.path() / "w.json";
  std::string w = kPass14Workload;
  w.replace(w.find("\"steps\": 2"), 10, "\"steps\": 2, \"steps\": 4");
  std::ofstream(workload) << w;
  expectRefusal(runCommand(ipusimBinary() + " run --synthetic-data " + quote(workload.string()) +
                           " --workload-set seed=3"),
                workload.string() + ": training.steps" + twice);

  // Engine options, and a --workload-set value.
  const fs::path fine = dir.path() / "fine.json";
  std::ofstream(fine) << kPass14Workload;
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(fine.string()) +
                           " --engine-options '{\"autoReport.all\":\"true\",\"autoReport.all\":\"false\"}'"),
                "--engine-options: autoReport.all" + twice);
  expectRefusal(runCommand(ipusimBinary() + " run --synthetic-data " + quote(fine.string()) +
                           " --workload-set 'optimizer={\"type\":\"sgd\",\"type\":\"adam\"}'"),
                "workload assignment 'optimizer': type" + twice);
}

// Recomputation asked for that recomputes nothing was claimed: a checkpoint
// on the first layer (nothing before it to recompute) compiled with no
// recompute op, yet the summaries said "recomputing from 1 checkpoint"; a
// checkpoint on the model's last layer recomputed the whole forward pass
// right after it ran (a longer step, the same fullest tile), and in a
// pipeline the last stage, which is never recomputed. A checkpoint on the
// last layer now cuts nothing, and both are said in warnings, not claimed.
TEST(AdversarialPass14, RecomputationThatRecomputesNothingIsNotClaimed) {
  ScratchDir dir("recompute-nothing");
  for (const char* checkpoint : {"a", "out"}) {
    const std::string file = checkpointedMlp(dir.path(), checkpoint, "[\"" + std::string(checkpoint) + "\"]");
    auto r = runCommand(ipusimBinary() + " compile " + quote(file));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(r.output.find("recompute/"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("recomputation     nothing to recompute from 1 checkpoint"), std::string::npos) << r.output;
    r = runCommand(ipusimBinary() + " run --synthetic-data " + quote(file));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(r.output.find("recomputing"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("ipusim: warning: training.recompute_checkpoints: no op is recomputed"), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("the recomputation checkpoint at layer 'out' cuts nothing") != std::string::npos,
              std::string(checkpoint) == "out")
        << r.output;
  }
  // A checkpoint that cuts still recomputes, and says so.
  const std::string cutting = checkpointedMlp(dir.path(), "b", R"(["b"])");
  const auto r = runCommand(ipusimBinary() + " run --synthetic-data " + quote(cutting));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find(", recomputing from 1 checkpoint (training.recompute_checkpoints)"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
}

// The run summary printed the final loss with std::to_string's six
// decimals: a diverging SGD (learning rate 1e30) showed
// "663758001176318015456782843904.000000", and a loss under 5e-7 would
// show "0.000000". Outside [1e-3, 1e6) it has six significant figures.
TEST(AdversarialPass14, AFinalLossFarFromOneKeepsItsSignificantFigures) {
  ScratchDir dir("loss-text");
  const fs::path file = dir.path() / "w.json";
  std::string w = kPass14Workload;
  w.replace(w.find("{\"type\": \"sgd\"}"), 15, "{\"type\": \"sgd\", \"learning_rate\": 1e30}");
  std::ofstream(file) << w;
  const auto r = runCommand(ipusimBinary() + " run " + quote(file.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::size_t at = r.output.find("final loss       ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string value = r.output.substr(at + 17, r.output.find('\n', at) - at - 17);
  EXPECT_LE(value.size(), 12u) << value;
  const double loss = std::stod(value);
  EXPECT_TRUE(loss > 1e6 || !std::isfinite(loss)) << value;
}

// The duplicate-key check of workload files (nlohmann's parser callback)
// was quadratic in an array's length: on every object's end the callback
// parser walks the enclosing array, so 200,000 empty objects took 8 s,
// 600,000 over a minute, and a 16 MiB workload of them (the size limit)
// would not end. The check is a pass of its own now, linear; a serialized
// graph (up to 1 GiB) reads its arrays of objects as fast. (The timeout
// ends the quadratic parse.)
TEST(AdversarialPass14, AKeyCheckOfManyObjectsEndsAtOnce) {
  ScratchDir dir("many-objects");
  std::string objects = "[{}";
  for (int i = 1; i < 600'000; ++i) objects += ",{}";
  objects += "]";
  const fs::path workload = dir.path() / "w.json";
  std::ofstream(workload) << "{\"junk\": " << objects << "}";
  auto r = runCommand("timeout 20 " + ipusimBinary() + " compile " + quote(workload.string()));
  expectRefusal(r, workload.string() + ": junk: unknown key");
  const fs::path graph = dir.path() / "g.json";
  std::ofstream(graph) << "{\"junk\": " << objects << "}";
  r = runCommand("timeout 20 " + ipusimBinary() + " run --graph " + quote(graph.string()));
  expectRefusal(r, "executable '" + graph.string() + "': junk: unknown key");
}

// `insights` offered training.recompute_checkpoints "auto" on the
// out-of-memory profile of a 2-layer MLP, which refuses "auto" (no layer to
// checkpoint): the profile did not say. A fit's profile now holds how many
// checkpoints "auto" finds (meta recompute_auto_checkpoints; the rule itself
// is checked in tests/profiler/test_analysis_insights.cpp).
TEST(AdversarialPass14, AFitsProfileSaysHowManyCheckpointsAutoFinds) {
  ScratchDir dir("auto-checkpoints-meta");
  const auto autoCheckpoints = [&](const std::string& name, const std::string& workloadText) {
    const fs::path workload = dir.path() / (name + ".json");
    std::ofstream(workload) << workloadText;
    const auto r = runCommand(withReports(dir.path() / name) + ipusimBinary() + " run " + quote(workload.string()));
    EXPECT_EQ(r.exitCode, 0) << r.output;
    return runCommand("sqlite3 " + quote((dir.path() / name / "profile.pop").string()) +
                      " \"SELECT value FROM meta WHERE key = 'recompute_auto_checkpoints'\"")
        .output;
  };
  EXPECT_EQ(autoCheckpoints("two", kPass14Workload), "0\n");
  nlohmann::json chain = nlohmann::json::parse(kPass14Workload);
  auto& layers = chain["model"]["layers"];
  for (int i = 1; i <= 6; ++i)  // a chain of 8 layers: "auto" cuts at every third of the 7 candidates
    layers.insert(layers.begin(), nlohmann::json::object({{"type", "dense"}, {"units", 8}, {"activation", "relu"},
                                                          {"name", "l" + std::to_string(i)}}));
  EXPECT_EQ(autoCheckpoints("eight", chain.dump()), "2\n");
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_14
