// Found by the twelfth adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix. (The others are unit tests: a remote buffer that no
// copy uses in tests/model/test_ir_json.cpp, the Streaming Memory refusal's
// figure in tests/model/test_timing_streaming_memory.cpp, the tile_memory
// insight's optimizer state in tests/profiler/test_analysis_insights.cpp,
// compare's collectives row in tests/profiler/test_analysis_compare.cpp.)
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace ipusim::test::test_adversarial_pass_12 {
namespace {

// bench/torch's ipusim-torch-dump wrote its dump over whatever OUT named:
// `ipusim-torch-dump w.json 2 w.json` replaced the workload with the dump.
// Its STEPS "abc" was refused as "stoull", and 0 dumped no training. The dump
// is now written as every ipusim output is, never over an input, and STEPS
// is checked by name, before the training.
TEST(AdversarialPass12, TheTorchDumpNeverReplacesItsWorkloadAndNamesABadStepCount) {
  // (bench/ is left out of the sanitizer builds, and by IPUSIM_BUILD_BENCH=OFF.)
  if (!fs::exists(std::string(binaryDir()) + "/bin/ipusim-torch-dump")) GTEST_SKIP() << "no bench/ tools in this build";
  ScratchDir dir("torch-dump-output");
  const fs::path workload = dir.path() / "w.json";
  const std::string text = R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 4, "activation": "softmax"}]},
    "optimizer": {"type": "sgd"},
    "training": {"steps": 2, "steps_per_execution": 2},
    "ipu": {"tiles": 4}})";
  std::ofstream(workload) << text;
  const std::string tool = std::string(binaryDir()) + "/bin/ipusim-torch-dump " + quote(workload.string());
  auto r = runCommand(tool + " 2 " + quote(workload.string()));
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find(workload.string() + ": is an input of this command"), std::string::npos) << r.output;
  EXPECT_EQ(readText(workload), text);
  for (const char* steps : {"abc", "0", "-1"}) {
    r = runCommand(tool + " " + steps + " " + quote((dir.path() / "out.json").string()));
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(r.output.find(std::string("STEPS '") + steps + "': expected a positive whole number of training steps"),
              std::string::npos)
        << r.output;
  }
  r = runCommand(tool + " 3 " + quote((dir.path() / "out.json").string()));
  EXPECT_NE(r.output.find("STEPS 3: expected a multiple of the 2 steps of one Engine::run (" + workload.string() +
                          ": training.steps_per_execution)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "out.json"));
}

// Sharding or offloading the state of a pipeline's plain SGD was refused
// with "give one that has (SGD with momentum, Adam, RMSprop, ...)", which
// the pipeline then refused in turn (it takes plain SGD only).
TEST(AdversarialPass12, APipelinesStatelessOptimizerIsNotToldToTakeOneWithState) {
  ScratchDir dir("pipeline-state");
  for (const char* key : {"replicated_optimizer_state_sharding", "offload_optimizer_state"}) {
    const fs::path file = dir.path() / (std::string(key) + ".json");
    std::ofstream(file) << R"({
      "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 64},
      "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "stage": 0},
                           {"type": "dense", "units": 4, "activation": "softmax", "stage": 1}]},
      "optimizer": {"type": "sgd"},
      "pipeline": {"gradient_accumulation_count": 4, "device_mapping": [0, 1]},
      "training": {"steps": 8, "steps_per_execution": 4, ")" << key << R"(": true},
      "ipu": {"tiles": 4, "num_ipus": 4}})";
    const auto r = runCommand(ipusimBinary() + " compile " + quote(file.string()));
    expectRefusal(r, file.string() + ": training." + key + ": the optimizer (" + file.string() + ": optimizer) ");
    EXPECT_NE(r.output.find("leave it false (a pipeline trains with plain SGD only)"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("give one that has"), std::string::npos) << r.output;
  }
}

// An out-of-memory summary offered to keep the optimizer state in Streaming
// Memory where it could not fit there (streamingMemory.bytesPerIpu 100 for
// 6992 bytes of Adam's state): the compile then refused that very key.
TEST(AdversarialPass12, OutOfMemoryOffersStreamingMemoryOnlyWhereTheStateFitsThere) {
  ScratchDir dir("offload-remedy");
  const fs::path file = dir.path() / "adam.json";
  std::ofstream(file) << R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "input_shape": [16], "classes": 10, "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 32, "activation": "relu"},
                         {"type": "dense", "units": 10, "activation": "softmax"}]},
    "optimizer": {"type": "adam"},
    "training": {"steps": 4, "steps_per_execution": 2},
    "ipu": {"arch": "ipu2", "tiles": 16}})";
  const std::string compile = ipusimBinary() + " compile " + quote(file.string()) + " --set tile.memoryBytes=1500";
  auto r = runCommand(compile);
  ASSERT_NE(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("(training.offload_optimizer_state: true;"), std::string::npos) << r.output;
  r = runCommand(compile + " --set streamingMemory.bytesPerIpu=100");
  ASSERT_NE(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("or set compile.allow_out_of_memory"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("offload_optimizer_state"), std::string::npos) << r.output;
}

// A RecomputationCheckpoint after the model's softmax: under from_logits
// true the loss applied the softmax a second time without a word (refused
// without the checkpoint); under false the checkpoint was told that its own
// activation must be softmax. Both are refused naming the layer it reads;
// logits passed through a checkpoint still train.
TEST(AdversarialPass12, ACheckpointAfterTheSoftmaxIsRefusedNamingTheLayerItReads) {
  ScratchDir dir("checkpoint-output");
  for (const char* fromLogits : {"false", "true"}) {
    const fs::path file = dir.path() / (std::string("from_logits_") + fromLogits + ".json");
    std::ofstream(file) << R"({
      "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
      "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "name": "a"},
                           {"type": "dense", "units": 4, "activation": "softmax", "name": "out"},
                           {"type": "recomputation_checkpoint", "name": "keep"}]},
      "loss": {"type": "sparse_categorical_crossentropy", "from_logits": )" << fromLogits << R"(},
      "training": {"steps": 2, "steps_per_execution": 2},
      "ipu": {"tiles": 4}})";
    expectRefusal(runCommand(ipusimBinary() + " compile " + quote(file.string())),
                  file.string() + ": model.layers: the last layer ('keep') is a RecomputationCheckpoint passing on the "
                                  "softmax of layer 'out', which sparse_categorical_crossentropy computes itself");
  }
  const fs::path logits = dir.path() / "logits.json";
  std::ofstream(logits) << R"({
    "dataset": {"format": "synthetic", "batch_size": 4, "input_shape": [8], "classes": 4, "examples": 16},
    "model": {"layers": [{"type": "dense", "units": 8, "activation": "relu", "name": "a"},
                         {"type": "dense", "units": 4, "name": "out"},
                         {"type": "recomputation_checkpoint", "name": "keep"}]},
    "loss": {"type": "sparse_categorical_crossentropy", "from_logits": true},
    "training": {"steps": 2, "steps_per_execution": 2},
    "ipu": {"tiles": 4}})";
  const auto r = runCommand(ipusimBinary() + " compile " + quote(logits.string()));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_12
