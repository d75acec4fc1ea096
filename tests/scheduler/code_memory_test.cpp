// compile.code_memory: the compiler counts each tile's code and vertex state
// (model/ir/code_memory.hpp) in its memory. The constants' fits reproduce
// the measurement they were fitted to (a Dense layer, 4096 -> 1024 at batch
// 16, as Poplar 3.0 compiled it: the counts here are the ones the fits
// divide by), and a forward-only program needs far less code than a
// training step: the tutorial's predict step's fullest tile is well below
// its fit step's, where without code the two differ by 24 bytes.
#include "model/ir/code_memory.hpp"
#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fstream>

namespace ipusim::testing::code_memory_test {
namespace {

nlohmann::json denseLayer() {
  return nlohmann::json::parse(R"({
    "name": "dense_4096_1024",
    "dataset": {"format": "synthetic", "batch_size": 16, "features": 4096, "classes": 1024, "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 1024}]},
    "loss": {"type": "sparse_categorical_crossentropy", "from_logits": true},
    "task": "predict",
    "training": {"steps": 1, "steps_per_execution": 1},
    "compile": {"code_memory": true}
  })");
}

nlohmann::json tutorial(const std::string& task, bool codeMemory) {
  std::ifstream in(std::string(IPUSIM_SOURCE_DIR) + "/workloads/mnist_with_feeds.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["task"] = task;
  j["training"]["steps"] = 10;
  j["dataset"] = {{"format", "synthetic"}, {"batch_size", 32}, {"features", 784}, {"classes", 10}, {"examples", 320}};
  j["compile"]["code_memory"] = codeMemory;
  return j;
}

scheduler::CompiledWorkload compileJson(const nlohmann::json& j) {
  return scheduler::compile(scheduler::parseWorkload(j, j["name"].get<std::string>() + ".json"));
}

TEST(CodeMemoryFits, TheDenseLayerCountsAreTheOnesTheFitsDivideBy) {
  const scheduler::CompiledWorkload c = compileJson(denseLayer());
  // The counts are of the executable before the code tensors were added
  // (they hold no vertex and take part in no program).
  ir::CodeCounts sum;
  for (const ir::CodeCounts& t : ir::countCodeOnTiles(c.exe, c.target.totalTiles(), c.target.tile)) {
    sum.codelets += t.codelets, sum.vertices += t.vertices, sum.fields += t.fields, sum.params += t.params;
    sum.steps += t.steps, sum.messages += t.messages;
  }
  EXPECT_EQ(sum.codelets, 2496u);
  EXPECT_EQ(sum.vertices, 7616u);
  EXPECT_EQ(sum.fields, 19776u);
  EXPECT_EQ(sum.params, 30336u);
  EXPECT_EQ(sum.steps, 7017u);
  EXPECT_EQ(sum.messages, 16794u);
  // Within 1% of the measured figures where fitted (each tile rounds up to
  // whole words), and the estimated vertex state within 6% of its 178 KiB.
  const ir::CodeBytes& b = c.report.codeBytes;
  EXPECT_NEAR(double(b.vertexCode), 3.4 * 1024 * 1024, 0.01 * 3.4 * 1024 * 1024);
  EXPECT_NEAR(double(b.controlCode), 100.0 * 1024, 0.02 * 100 * 1024);
  EXPECT_NEAR(double(b.exchangeCode), 360.0 * 1024, 0.02 * 360 * 1024);
  EXPECT_NEAR(double(b.vertexState), 178.0 * 1024, 0.06 * 178 * 1024);
}

TEST(CodeMemoryFits, APredictStepNeedsFarLessOfATileThanAFitStep) {
  const auto fit = compileJson(tutorial("fit", true)), predict = compileJson(tutorial("predict", true));
  EXPECT_LT(predict.report.codeBytes.total(), fit.report.codeBytes.total() / 2);
  EXPECT_LT(double(predict.report.maxTileBytes), 0.75 * double(fit.report.maxTileBytes));
  // Without code memory, no code tensor, and the tiles hold only the tensors:
  // the tutorial's weights dominate, and the two steps' fullest tiles differ by 24 bytes.
  const auto fitPlain = compileJson(tutorial("fit", false)), predictPlain = compileJson(tutorial("predict", false));
  for (const ir::Tensor& t : fitPlain.exe.tensors) EXPECT_NE(t.category, ir::kVertexCodeCategory);
  EXPECT_EQ(fitPlain.report.codeBytes.total(), 0u);
  EXPECT_EQ(fitPlain.report.maxTileBytes - predictPlain.report.maxTileBytes, 24u);
  EXPECT_GT(fit.report.maxTileBytes, fitPlain.report.maxTileBytes);
}

TEST(CodeMemoryFits, TheWorkloadKeyIsABoolean) {
  nlohmann::json j = denseLayer();
  j["compile"]["code_memory"] = "yes";
  try {
    scheduler::parseWorkload(j, "dense.json");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("compile.code_memory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::testing::code_memory_test
