// Found by the eleventh adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix. (The others are unit tests: a remote buffer's size
// and name in tests/model/test_ir_json.cpp, a RecomputationCheckpoint layer
// named as a checkpoint in tests/scheduler/recomputation_test.cpp.)
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace ipusim::test::test_adversarial_pass_11 {
namespace {

// A small MLP whose Adam state is offloaded to Streaming Memory.
std::string offloadedMlp(const fs::path& dir) {
  const fs::path file = dir / "offloaded.json";
  std::ofstream(file) << R"({
    "name": "offloaded",
    "dataset": {"format": "synthetic", "batch_size": 8, "input_shape": [16], "classes": 10, "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 32, "activation": "relu"},
                         {"type": "dense", "units": 10, "activation": "softmax"}]},
    "optimizer": {"type": "adam"},
    "training": {"steps": 4, "steps_per_execution": 2, "offload_optimizer_state": true},
    "ipu": {"arch": "ipu2", "tiles": 16}})";
  return file.string();
}

// The workload's own ipu.arch ipu1 was refused by the key, but a target
// without Streaming Memory given on the command line (--arch ipu1, --set
// streamingMemory.bytesPerIpu) was not: `compile` accepted the model and
// printed its "Streaming Memory 6992 bytes", and `run` failed only at load,
// naming a remote buffer but neither the file nor the key. Both refuse it
// at compile, by the file and the key.
TEST(AdversarialPass11, AnOffloadedStateNeedsTheTargetsStreamingMemoryWhateverSetsTheTarget) {
  ScratchDir dir("offload-target");
  const std::string workload = offloadedMlp(dir.path());
  expectRefusal(runCommand(ipusimBinary() + " compile " + quote(workload) + " --arch ipu1"),
                workload + ": training.offload_optimizer_state: the optimizer state takes 6992 bytes of Streaming "
                           "Memory on IPU 0, over streamingMemory.bytesPerIpu (0 bytes on target ipu1: no Streaming "
                           "Memory): expected a target with Streaming Memory (ipu2)");
  expectRefusal(
      runCommand(ipusimBinary() + " run " + quote(workload) + " --synthetic-data --set streamingMemory.bytesPerIpu=100"),
      workload + ": training.offload_optimizer_state: the optimizer state takes 6992 bytes of Streaming Memory on IPU "
                 "0, over streamingMemory.bytesPerIpu (100 bytes on target ipu2): expected a larger "
                 "streamingMemory.bytesPerIpu");
}

// A sweep's phase shares left out the IPU-Link, collective and Streaming
// Memory phases of `run --json`'s step_cycles, so the offloaded state's
// copies were counted as "host and idle": the natural sweep of
// streamingMemory.bytesPerSecond showed them as host time.
TEST(AdversarialPass11, ASweepCountsStreamingMemoryCopiesInTheirOwnShare) {
  ScratchDir dir("sweep-streaming-memory");
  const std::string workload = offloadedMlp(dir.path());
  const fs::path out = dir.path() / "sweep";
  const auto r = runCommand(ipusimBinary() + " sweep " + quote(workload) +
                            " --vary streamingMemory.bytesPerSecond=1e9 --synthetic-data -j 1 --no-plot -o " +
                            quote(out.string()));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const nlohmann::json sweep = nlohmann::json::parse(readText(out / "sweep.json"));
  const nlohmann::json& point = sweep.at("points").at(0);
  const nlohmann::json run = nlohmann::json::parse(readText(out / "points" / "0.json"));
  const double expected = run.at("steps").get<double>() * run.at("step_cycles").at("streaming_memory").get<double>() /
                          run.at("cycles").get<double>();
  ASSERT_GT(expected, 0.0);
  EXPECT_DOUBLE_EQ(point.at("shares").at("streaming_memory").get<double>(), expected);
  double total = 0;
  for (const auto& [name, share] : point.at("shares").items()) total += share.get<double>();
  EXPECT_NEAR(total, 1.0, 1e-9);
  const std::string csv = readText(out / "sweep.csv");
  EXPECT_NE(csv.find("stream_copy_share,ipu_link_share,collective_share,streaming_memory_share,host_and_idle_share"),
            std::string::npos)
      << csv;
}

// --weights and --input-shape are given to the workload as assignments
// (model.weights, dataset.input_shape), and their errors were labelled
// "--workload-set on the workload made for ...", a flag the user had not
// given. They name the flags that were.
TEST(AdversarialPass11, ErrorsOfWeightsAndInputShapeNameTheirOwnFlags) {
  ScratchDir dir("weights-flag");
  const std::string keras = quote(sourcePath("workloads/keras/tutorial_mlp_tf2.json"));
  const std::string missing = (dir.path() / "missing.h5").string();
  auto r = runCommand(ipusimBinary() + " predict --keras " + keras + " --weights " + quote(missing) + " --synthetic-data");
  expectRefusal(r, "--weights on the workload made for " + sourcePath("workloads/keras/tutorial_mlp_tf2.json") +
                       ": model.weights: " + missing);
  EXPECT_EQ(r.output.find("--workload-set"), std::string::npos) << r.output;
  r = runCommand(ipusimBinary() + " run --keras " + keras + " --input-shape 7 --workload-set dataset.batch_size=0 " +
                 "--synthetic-data");
  expectRefusal(r, "--input-shape and --workload-set on the workload made for");
}

}  // namespace
}  // namespace ipusim::test::test_adversarial_pass_11
