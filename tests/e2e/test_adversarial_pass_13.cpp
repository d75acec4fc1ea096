// Found by the thirteenth adversarial pass of issue 33 (acceptance 2). Each
// case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace ipusim::test::test_adversarial_pass_13 {
namespace {

// A workload key given twice in one object was taken silently, the last
// value winning: {"steps": 8, "steps": 4} trained 4 steps, and a second
// pipeline.recomputation_mode replaced the first with no word. Refused now,
// naming the file and the key's path.
TEST(AdversarialPass13, AWorkloadKeyGivenTwiceIsRefusedByName) {
  ScratchDir dir("duplicate-key");
  const fs::path file = dir.path() / "w.json";
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 4, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 8, "steps": 4},
    "ipu": {"tiles": 4}})";
  auto r = runCommand(ipusimBinary() + " compile " + quote(file.string()));
  expectRefusal(r, file.string() + ": training.steps: given twice in one object");
  EXPECT_NE(r.output.find("expected each key once"), std::string::npos) << r.output;

  const fs::path layer = dir.path() / "layer.json";
  std::ofstream(layer) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 4, "units": 8, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 4},
    "ipu": {"tiles": 4}})";
  r = runCommand(ipusimBinary() + " compile " + quote(layer.string()));
  expectRefusal(r, layer.string() + ": model.layers[].units: given twice in one object");

  // The same key in two objects is no duplicate.
  const fs::path fine = dir.path() / "fine.json";
  std::ofstream(fine) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu"},
                         {"type": "dense", "units": 4, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 2, "steps_per_execution": 2},
    "ipu": {"tiles": 4}})";
  r = runCommand(ipusimBinary() + " compile " + quote(fine.string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// An ipu2 given --set streamingMemory.bytesPerIpu=0 with the optimizer state
// offloaded was told "no Streaming Memory): expected a target with Streaming
// Memory (ipu2)", the target it ran on. Only ipu1 lacks it; the ipu2 is told
// to give a larger streamingMemory.bytesPerIpu.
TEST(AdversarialPass13, AZeroStreamingMemoryOnIpu2NamesTheParameterNotTheTarget) {
  ScratchDir dir("zero-streaming-memory");
  const fs::path file = dir.path() / "w.json";
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 4, "activation": "softmax"}]},
    "optimizer": {"type": "adam"},
    "training": {"steps": 2, "steps_per_execution": 2, "offload_optimizer_state": true},
    "ipu": {"tiles": 4}})";
  const auto r =
      runCommand(ipusimBinary() + " compile " + quote(file.string()) + " --set streamingMemory.bytesPerIpu=0");
  expectRefusal(r, "training.offload_optimizer_state: the optimizer state takes ");
  EXPECT_NE(r.output.find("expected a larger streamingMemory.bytesPerIpu"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("expected a target with Streaming Memory"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_13
