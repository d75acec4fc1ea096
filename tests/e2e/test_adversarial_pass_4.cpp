// Found by the fourth adversarial pass of issue 33 (acceptance 2), and the
// defects the third saw but left. Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

namespace ipusim::test::test_adversarial_pass_4 {
namespace {

// The out-of-memory errors named the layers but not the workload file, which
// every other workload error names: the up-front estimate's (a layer far too
// wide for the chip) and the memory plan's (a model that passes the estimate
// but not the plan), from `run` and `compile`, and a Keras file's.
TEST(AdversarialPass4, OutOfMemoryNamesTheWorkloadFile) {
  ScratchDir dir("oom-file");
  const std::string wide = workloadWith(dir.path(), [](nlohmann::json& j) {
    j["model"]["layers"][1]["units"] = 200000;  // a 627 MB kernel: the estimate refuses it
    j["dataset"]["format"] = "synthetic";
  });
  for (const char* command : {" run --steps 10 ", " compile "}) {
    const auto r = runCommand(ipusimBinary() + command + quote(wide));
    expectRefusal(r, "ipusim: error: " + wide + ": out of memory: the model cannot fit 1472 tiles");
  }
  fs::create_directory(dir.path() / "plan");
  const std::string planned = workloadWith(dir.path() / "plan", [](nlohmann::json& j) {
    j["model"]["layers"][1]["units"] = 64;  // passes the estimate, not the plan, on one tile
    j["ipu"]["tiles"] = 1;
    j["dataset"]["format"] = "synthetic";
  });
  for (const char* command : {" run --steps 10 ", " compile "}) {
    const auto r = runCommand(ipusimBinary() + command + quote(planned));
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_EQ(r.output.rfind("ipusim: error: " + planned + ": Out of memory in the compiled workload", 0), 0u) << r.output;
  }
  const std::string keras = sourcePath("workloads/keras/mnist_convnet_tf2.json");
  const auto r = runCommand(ipusimBinary() + " run --keras " + quote(keras) + " --tiles 2 --synthetic-data");
  expectRefusal(r, "ipusim: error: " + keras + ": out of memory: the model cannot fit 2 tiles");
}

// A mask refused where the graph is built (a layer that does not model it,
// a masked output) named the workload by its name ("k: layer ..."): for a
// Keras model now its file, beside the workload file that names it; for a
// workload's own layers its file (with the compiler's other errors).
TEST(AdversarialPass4, AMaskRefusedInTheGraphNamesTheKerasFile) {
  ScratchDir dir("mask-keras-file");
  std::string keras = readText(sourcePath("tests/data/keras/public/imdb_conv1d_lstm_keras209.json"));
  const std::string unmasked = "\"mask_zero\": false";  // its one Embedding's
  ASSERT_NE(keras.find(unmasked), std::string::npos);
  keras.replace(keras.find(unmasked), unmasked.size(), "\"mask_zero\": true");
  std::ofstream(dir.path() / "m.json") << keras;
  std::ofstream(dir.path() / "w.json") << R"({"name": "k", "model": {"keras": "m.json"}, "loss": "binary_crossentropy",
    "dataset": {"format": "synthetic", "batch_size": 2, "examples": 2}, "training": {"steps": 1, "steps_per_execution": 1}})";
  const std::string workload = (dir.path() / "w.json").string(), model = (dir.path() / "m.json").string();
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(workload) + " --synthetic-data"),
                "ipusim: error: " + workload + ": " + model + ": layer 'conv1d_1' (conv1d): its input carries Keras's mask (an "
                "Embedding's mask_zero");
  expectRefusal(runCommand(ipusimBinary() + " run --keras " + quote(model) + " --synthetic-data --workload-set loss=binary_crossentropy"),
                "ipusim: error: " + model + ": layer 'conv1d_1' (conv1d): its input carries Keras's mask");
  const std::string own = workloadWith(dir.path(), [](nlohmann::json& j) {
    j["dataset"] = {{"format", "synthetic"}, {"batch_size", 2}, {"examples", 2}, {"input_shape", {8}}, {"classes", 3}};
    j["model"]["layers"] = {{{"type", "embedding"}, {"input_dim", 20}, {"output_dim", 4}, {"mask_zero", true}},
                            {{"type", "flatten"}, {"name", "flat"}}, {{"type", "dense"}, {"units", 3}, {"activation", "softmax"}}};
  });
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(own) + " --synthetic-data"),
                "ipusim: error: " + own + ": mnist_with_feeds: layer 'flat' (flatten): its input carries Keras's mask");
}

// A serialized graph's errors named no file: a vertex left unconnected
// ("computeSets[0] 'scale' vertices[0] ...: field 'in1' is not connected"),
// and a masked text classifier's graph (3 classes, compile -o) failing as it
// ran on the runner's labels in [0, 9] ("codelet SoftmaxCrossEntropy:
// labels[0] = 9, expected a class in [0, 3)") without saying why.
TEST(AdversarialPass4, AGraphsErrorsNameTheGraphFile) {
  ScratchDir dir("graph-errors");
  nlohmann::json g = nlohmann::json::parse(readText(kGraph));
  g["computeSets"][0]["vertices"][0]["fields"].erase(1);
  const std::string damaged = (dir.path() / "damaged.json").string();
  std::ofstream(damaged) << g.dump();
  expectRefusal(runCommand(ipusimBinary() + " run --graph " + quote(damaged)),
                "ipusim: error: " + damaged + ": computeSets[0] 'scale' vertices[0] (codelet Mul, tile 0): field 'in1' is not connected");

  const std::string workload = workloadWith(dir.path(), [](nlohmann::json& j) {
    j["dataset"] = {{"format", "synthetic"}, {"batch_size", 4}, {"examples", 16}, {"input_shape", {8}}, {"classes", 3}};
    j["model"]["layers"] = {{{"type", "embedding"}, {"input_dim", 20}, {"output_dim", 4}, {"mask_zero", true}},
                            {{"type", "lstm"}, {"units", 4}}, {{"type", "dense"}, {"units", 3}, {"activation", "softmax"}}};
  });
  const std::string graph = (dir.path() / "text.json").string();
  ASSERT_EQ(runCommand(ipusimBinary() + " compile " + quote(workload) + " -o " + quote(graph)).exitCode, 0);
  const auto r = runCommand(ipusimBinary() + " run --graph " + quote(graph) + " --runs 1");
  expectRefusal(r, "ipusim: error: " + graph + ": codelet SoftmaxCrossEntropy: labels[0] = 9, expected a class in [0, 3)");
  EXPECT_NE(r.output.find("run --graph feeds every integer input stream values in [0, 9]"), std::string::npos) << r.output;
  const auto timed = runCommand(ipusimBinary() + " run --graph " + quote(graph) + " --runs 1 --synthetic-data");
  EXPECT_EQ(timed.exitCode, 0) << timed.output;
}

// A functional run allocates every byte of simulated tile memory: with
// allow_out_of_memory, a Dense of 8e6 units over 6 steps planned 96 GB of
// tiles (each of the 1,472 over its capacity) and the run grew until the
// system killed it (24 GB at 2e7 units). Refused before the run, naming the
// file; timing only still runs.
TEST(AdversarialPass4, AFunctionalRunOfTilesHoldingMoreThanTheHostBoundIsRefusedFirst) {
  // Under 4 GB of address space: without the check the run fails trying to
  // allocate (as "out of memory", naming nothing) instead of taking the machine.
  if (kSanitizedBuild) GTEST_SKIP() << "a sanitized binary cannot run under ulimit -v";
  ScratchDir dir("simulated-bytes");
  const std::string workload = workloadWith(dir.path(), [](nlohmann::json& j) {
    j["dataset"] = {{"format", "synthetic"}, {"batch_size", 1}, {"examples", 16}, {"input_shape", {6, 5}}, {"classes", 10}};
    j["model"]["layers"] = {{{"type", "dense"}, {"units", 8}}, {{"type", "dense"}, {"units", 8000000}},
                            {{"type", "global_average_pooling1d"}}, {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}};
    j["compile"] = {{"allow_out_of_memory", true}};
    j["optimizer"] = {{"type", "sgd"}, {"learning_rate", 0.01}};
  });
  const auto r = runCommand("ulimit -v 4000000; " + ipusimBinary() + " run " + quote(workload) + " --steps 10 2>&1 | grep -v warning");
  EXPECT_NE(r.output.find("ipusim: error: " + workload + ": the compiled model's tiles hold 96288006488 bytes in all, over "
                          "the 8589934592 bytes a functional run simulates on the host"),
            std::string::npos) << r.output;
  const auto timed = runCommand(ipusimBinary() + " run " + quote(workload) + " --steps 10 --synthetic-data");
  EXPECT_EQ(timed.exitCode, 0) << timed.output;
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_4
