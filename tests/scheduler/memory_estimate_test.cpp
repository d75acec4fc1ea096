// The up-front memory estimate (scheduler/models/memory_estimate.hpp).
#include "scheduler/compiler.hpp"
#include "scheduler/models/memory_estimate.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ipusim::scheduler::memory_estimate_test {
namespace {

// Token ids through an embedding into `last`, the model's output, trained
// by mean squared error at batch 3.
Workload withLastLayer(const nlohmann::json& last) {
  nlohmann::json layers = nlohmann::json::array(
      {{{"type", "embedding"}, {"input_dim", 50}, {"output_dim", 16}, {"name", "tok"}}, last});
  layers[1]["name"] = "last";
  const nlohmann::json j = {
      {"dataset", {{"format", "synthetic"}, {"batch_size", 3}, {"input_shape", {4}}, {"classes", 5}, {"examples", 16}}},
      {"model", {{"layers", layers}}}, {"loss", "mean_squared_error"},
      {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.01}}},
      {"training", {{"steps", 1}, {"steps_per_execution", 1}}}};
  return parseWorkload(j, "w.json");
}

const ModelMemoryEstimate::Variable* variable(const ModelMemoryEstimate& e, const std::string& name) {
  for (const auto& v : e.variables)
    if (v.name == name) return &v;
  return nullptr;
}

// Found by the third adversarial pass of issue 33: a model ending in an
// attention with a wide output (output_shape 1.2e8, Adam, batch 1) was
// estimated at 5.76 GB and peaked at 10.6 GB; the loss keeps the output
// (480 MB), which no layer's footprint counted, a Dense's as little as an
// attention's. Counted now (6.24 GB for the same model; a Dense as wide,
// the same).
TEST(MemoryEstimate, TheModelsOutputKeptByTheLossIsCounted) {
  const nlohmann::json attention = {{"type", "multi_head_attention"}, {"num_heads", 2}, {"key_dim", 1},
                                    {"inputs", {"tok", "tok"}}, {"output_shape", 1000}};
  const nlohmann::json dense = {{"type", "dense"}, {"units", 1000}};
  for (const nlohmann::json& last : {attention, dense}) {
    const ModelMemoryEstimate e = estimateModelMemory(withLastLayer(last), 16);
    const ModelMemoryEstimate::Variable* output = variable(e, "last/output");
    ASSERT_NE(output, nullptr) << last.dump();
    EXPECT_EQ(output->category, "activations");
    EXPECT_EQ(output->bytes, 4.0L * 3 * 4 * 1000) << last.dump();  // float, batch 3, [4 steps, 1000]
    long double sum = 0;
    for (const auto& v : e.variables) sum += v.bytes;
    EXPECT_EQ(e.totalBytes, sum);
  }
}

// The refusal says what it counted: an attention's activations are not a
// conv layer's (the summary spoke of "the conv layers' activations" whatever
// the layers, found by the fourth adversarial pass of issue 33).
TEST(MemoryEstimate, TheRefusalNamesTheActivationsItCounted) {
  Workload w = withLastLayer({{"type", "multi_head_attention"}, {"num_heads", 4096}, {"key_dim", 8}, {"inputs", {"tok", "tok"}}});
  w.ipu.tiles = 16;
  model::Target target = targetFor(w);
  try {
    checkModelFits(w, target, estimateModelMemory(w, target.totalTiles()));
    FAIL() << "no out-of-memory error";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("its weights, largest weight gradient, stream buffers and the activations the backward pass keeps ("),
              std::string::npos) << m;
    EXPECT_NE(m.find("Largest variables, per tile: last/attention (activations) "), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace ipusim::scheduler::memory_estimate_test
