// Memory bounded by what a model is (issue 33): inputs that make the
// compile's memory or time grow are checked before the work, against a
// stated bound (scheduler/models/workload_limits.hpp), with an error naming
// the key, the value and the bound: layer counts, names, kernel sizes, a
// pipeline's mini-batches in flight, replicas laid out in full.
#include "hardening_helpers.hpp"

#include "scheduler/models/workload_limits.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ipusim::test::test_model_size_limits {
namespace {

std::string compile(const std::string& workload) { return "timeout 120 " + ipusimBinary() + " compile " + quote(workload); }

TEST(ModelSizeLimits, TooManyLayersAreRefusedBeforeCompiling) {
  ScratchDir dir("limit-layers");
  const std::string w = workloadWith(dir.path(), [](nlohmann::json& j) {
    nlohmann::json layers = nlohmann::json::array({{{"type", "flatten"}}});
    for (std::uint64_t i = 0; i < scheduler::kMaxLayers; ++i) layers.push_back({{"type", "dense"}, {"units", 2}});
    j["model"]["layers"] = layers;
  });
  expectRefusal(runCommand(compile(w)), "w.json: model.layers: 8193 layer calls are over the limit of 8192");
}

TEST(ModelSizeLimits, ALongNameIsRefusedBeforeCompiling) {
  // A layer's name is copied into each of its tensors, compute sets,
  // programs and profile slices: a 1 MB name made a 465 MB profile of 20
  // steps. Workload and Keras names alike, quoted by their first 40 bytes.
  ScratchDir dir("limit-names");
  const std::string tooLong(scheduler::kMaxNameBytes + 1, 'n');
  const std::string layer = workloadWith(dir.path(), [&](nlohmann::json& j) { j["model"]["layers"][1]["name"] = tooLong; });
  expectRefusal(runCommand(compile(layer)), "w.json: model.layers[1].name: '" + tooLong.substr(0, 40) +
                                                "...' is 1025 bytes long, over the limit of 1024");
  const std::string workload = workloadWith(dir.path(), [&](nlohmann::json& j) { j["name"] = tooLong; });
  expectRefusal(runCommand(compile(workload)), "w.json: name: '" + tooLong.substr(0, 40) + "...' is 1025 bytes long");
  nlohmann::json keras = nlohmann::json::parse(readText(sourcePath("workloads/keras/tutorial_mlp_tf2.json")));
  keras["config"]["layers"].back()["config"]["name"] = tooLong;
  const fs::path kerasFile = dir.path() / "k.json";
  std::ofstream(kerasFile) << keras.dump();
  expectRefusal(runCommand("timeout 120 " + ipusimBinary() + " run --keras " + quote(kerasFile.string()) +
                           " --synthetic-data --steps 10"),
                "k.json: layer '" + tooLong.substr(0, 40) + "...': its name is 1025 bytes long, over the limit of 1024");
  // A name at the bound compiles.
  const std::string atBound =
      workloadWith(dir.path(), [](nlohmann::json& j) { j["model"]["layers"][1]["name"] = std::string(1024, 'n'); });
  const auto r = runCommand(compile(atBound));
  EXPECT_EQ(r.exitCode, 0) << r.output.substr(0, 400);
}

TEST(ModelSizeLimits, AHugeKernelIsRefusedNamingItsKey) {
  ScratchDir dir("limit-kernel");
  const std::string w = workloadWith(dir.path(), [](nlohmann::json& j) {
    j["dataset"]["input_shape"] = {28, 28, 1};
    j["model"]["layers"] = {{{"type", "conv2d"}, {"filters", 4}, {"kernel_size", {1000, 1000}}, {"padding", "same"}},
                            {{"type", "flatten"}},
                            {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}};
  });
  expectRefusal(runCommand(compile(w)),
                "w.json: model.layers[0].kernel_size: 1000x1000 is 1000000 kernel taps, over the limit of 4096");
  // A 64x64 kernel, the bound, compiles.
  const std::string atBound = workloadWith(dir.path(), [](nlohmann::json& j) {
    j["dataset"]["input_shape"] = {28, 28, 1};
    j["model"]["layers"] = {{{"type", "conv2d"}, {"filters", 4}, {"kernel_size", {64, 64}}, {"padding", "same"}},
                            {{"type", "flatten"}},
                            {{"type", "dense"}, {"units", 10}, {"activation", "softmax"}}};
  });
  const auto r = runCommand(compile(atBound));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// Each mini-batch in flight runs the stages' compute sets and copies on its
// own tensors (their vertices and regions are laid out once) and lays out
// its tensors (and their intervals) and programs (and their renames) again:
// those are bounded before anything is laid out.
TEST(ModelSizeLimits, APipelinesMiniBatchesInFlightAreBoundedBeforeTheyAreCloned) {
  ScratchDir dir("limit-pipeline");
  const fs::path w = dir.path() / "p.json";
  nlohmann::json j = nlohmann::json::parse(readText(sourcePath("workloads/mnist_pipelined_2ipus.json")));
  j["pipeline"]["gradient_accumulation_count"] = 4096;
  j["training"]["steps_per_execution"] = 4096;
  j["training"]["steps"] = 4096;
  std::ofstream(w) << j.dump();
  const auto r = runCommand(compile(w.string()));
  expectRefusal(r, "pipeline.gradient_accumulation_count: 4096 mini-batches in flight, each after the first "
                   "laying out 32936 tensor intervals, 145 tensor renames, 70 tensors and 60 programs of its own");
  EXPECT_NE(r.output.find("over the limit of 67108864"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("at most 1990 mini-batches"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test::test_model_size_limits
