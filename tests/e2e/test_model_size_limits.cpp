// Memory bounded by what a model is (issue 33): inputs that make the
// compile's memory or time grow are checked before the work, against a
// stated bound (scheduler/models/workload_limits.hpp), with an error naming
// the key, the value and the bound: layer counts, kernel sizes, a
// pipeline's mini-batches in flight, replicas laid out in full.
#include "hardening_helpers.hpp"

#include "scheduler/models/workload_limits.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ipusim::test {
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

TEST(ModelSizeLimits, APipelinesMiniBatchesInFlightAreBoundedBeforeTheyAreCloned) {
  ScratchDir dir("limit-pipeline");
  const fs::path w = dir.path() / "p.json";
  nlohmann::json j = nlohmann::json::parse(readText(sourcePath("workloads/mnist_pipelined_2ipus.json")));
  j["pipeline"]["gradient_accumulation_count"] = 1024;
  j["training"]["steps_per_execution"] = 1024;
  j["training"]["steps"] = 4096;
  std::ofstream(w) << j.dump();
  const auto r = runCommand(compile(w.string()));
  expectRefusal(r, "pipeline.gradient_accumulation_count: 1024 mini-batches of ");
  EXPECT_NE(r.output.find("over the limit of 16777216"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("at most "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ipusim::test
