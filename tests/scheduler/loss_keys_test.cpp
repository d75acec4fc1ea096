// The keys of a loss, from a workload or a Keras compile_config alike
// (scheduler/models/workload_parts.hpp, checkLossKeys): label smoothing on
// the two cross-entropies that have it, Huber's delta, from_logits only on
// the cross-entropies; each refused elsewhere with the same message, naming
// the file and the key. And a binary classifier's dataset must have 2 classes.
#include "scheduler/models/keras_compile.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>

namespace ipusim::scheduler::loss_keys_test {
namespace {

nlohmann::json job(const nlohmann::json& loss, unsigned units = 10, const char* activation = "linear") {
  nlohmann::json j = nlohmann::json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "features": 16, "classes": 10},
    "model": {"layers": [{"type": "dense", "units": 10}]}})");
  j["model"]["layers"][0]["units"] = units;
  j["model"]["layers"][0]["activation"] = activation;
  j["loss"] = loss;
  return j;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

std::string workloadError(const nlohmann::json& loss, unsigned units = 10, const char* activation = "linear") {
  return errorOf([&] { parseWorkload(job(loss, units, activation), "w.json"); });
}

std::string kerasError(const nlohmann::json& loss) {
  return errorOf([&] { readKerasCompileConfig({{"loss", loss}}, "model.json"); });
}

nlohmann::json kerasLoss(const char* cls, const nlohmann::json& config) {
  return {{"module", "keras.losses"}, {"class_name", cls}, {"config", config}, {"registered_name", nullptr}};
}

TEST(LossKeys, ReadFromEitherFormat) {
  const Workload w = parseWorkload(job({{"type", "huber"}, {"delta", 0.25}}), "w.json");
  EXPECT_EQ(w.loss.type, "huber");
  EXPECT_DOUBLE_EQ(w.loss.delta, 0.25);
  const KerasCompileConfig k = readKerasCompileConfig(
      {{"loss", kerasLoss("CategoricalCrossentropy", {{"name", "categorical_crossentropy"}, {"from_logits", false},
                                                      {"label_smoothing", 0.1}, {"axis", -1},
                                                      {"reduction", "sum_over_batch_size"}})}},
      "model.json");
  EXPECT_EQ(k.loss->type, "categorical_crossentropy");
  EXPECT_DOUBLE_EQ(k.loss->labelSmoothing, 0.1);
  const KerasCompileConfig h = readKerasCompileConfig({{"loss", "mae"}}, "model.json");
  EXPECT_EQ(h.loss->type, "mean_absolute_error");
}

TEST(LossKeys, TheSameRulesInBothFormats) {
  // Label smoothing on a loss without it.
  EXPECT_NE(workloadError({{"type", "mean_squared_error"}, {"label_smoothing", 0.1}})
                .find("w.json: loss.label_smoothing: mean_squared_error has no label smoothing"),
            std::string::npos);
  EXPECT_NE(kerasError(kerasLoss("Huber", {{"name", "huber_loss"}, {"delta", 1.0}, {"label_smoothing", 0.1},
                                          {"reduction", "sum_over_batch_size"}}))
                .find("label_smoothing: huber has no label smoothing"),
            std::string::npos);
  // Out of range.
  EXPECT_NE(workloadError({{"type", "categorical_crossentropy"}, {"label_smoothing", 1.5}})
                .find("loss.label_smoothing: expected a number in [0, 1]"),
            std::string::npos);
  EXPECT_NE(kerasError(kerasLoss("BinaryCrossentropy", {{"name", "binary_crossentropy"}, {"label_smoothing", -0.5},
                                                       {"from_logits", false}, {"axis", -1}}))
                .find("model.json: compile_config.loss (BinaryCrossentropy): label_smoothing: expected a number in [0, 1]"),
            std::string::npos);
  EXPECT_NE(workloadError({{"type", "huber"}, {"delta", 0}}).find("loss.delta: expected a positive number"),
            std::string::npos);
  EXPECT_NE(kerasError(kerasLoss("Huber", {{"name", "huber_loss"}, {"delta", -1.0}})).find("delta: expected a positive number"),
            std::string::npos);
  // delta and from_logits where they mean nothing.
  EXPECT_NE(workloadError({{"type", "sparse_categorical_crossentropy"}, {"delta", 2}})
                .find("loss.delta: sparse_categorical_crossentropy has no delta (huber has)"),
            std::string::npos);
  EXPECT_NE(workloadError({{"type", "mean_absolute_error"}, {"from_logits", true}})
                .find("loss.from_logits: mean_absolute_error has no from_logits"),
            std::string::npos);
}

// Keras's names of the Kullback-Leibler divergence; it has no from_logits
// (it reads probabilities), in either format.
TEST(LossKeys, KlDivergenceNamesAndKeys) {
  for (const char* name : {"kl_divergence", "kld", "KLD", "kullback_leibler_divergence"})
    EXPECT_EQ(readKerasCompileConfig({{"loss", name}}, "model.json").loss->type, "kl_divergence") << name;
  EXPECT_EQ(readKerasCompileConfig({{"loss", kerasLoss("KLDivergence", {{"name", "kl_divergence"},
                                                                        {"reduction", "sum_over_batch_size"}})}},
                                   "model.json")
                .loss->type,
            "kl_divergence");
  EXPECT_NE(workloadError({{"type", "kl_divergence"}, {"from_logits", true}})
                .find("w.json: loss.from_logits: kl_divergence has no from_logits"),
            std::string::npos);
  EXPECT_NE(kerasError(kerasLoss("KLDivergence", {{"name", "kl_divergence"}, {"from_logits", true}}))
                .find("model.json: compile_config.loss (KLDivergence): from_logits: kl_divergence has no from_logits"),
            std::string::npos);
}

TEST(LossKeys, BinaryClassifierNeedsTwoClasses) {
  const std::string e = workloadError("binary_crossentropy", 1, "sigmoid");
  EXPECT_NE(e.find("one sigmoid unit under binary_crossentropy"), std::string::npos) << e;
  EXPECT_NE(e.find("dataset.classes is 10 (set it to 2)"), std::string::npos) << e;
}

}  // namespace
}  // namespace ipusim::scheduler::loss_keys_test
