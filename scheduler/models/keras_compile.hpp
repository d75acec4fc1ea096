#pragma once
// A Keras 3 compile_config -> the optimizer, loss and steps_per_execution it
// names (keras_model.hpp uses them when the workload does not set its own).
// Optimizers and losses may be names ("adam", "sparse_categorical_crossentropy")
// or serialized objects; an optimizer is read by the workload format's rules
// (optimizer_spec.hpp); an option that changes training and is not modelled
// (use_ema, loss scaling, label smoothing, ...) is an error naming the file,
// the key and the value.
// Internal to scheduler/.
#include "scheduler/models/workload.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace ipusim::scheduler {

struct KerasCompileConfig {
  std::optional<OptimizerSpec> optimizer;
  std::optional<LossSpec> loss;
  std::uint32_t stepsPerExecution = 0;  // 0: not given
  // `metrics` and `weighted_metrics` (no sample weights: the same values),
  // as written; read against the workload's final loss (metric_spec.hpp).
  nlohmann::json metrics = nlohmann::json::array();
};

// `format`: the file's ("tf2" | "keras3"), for what a null means. With
// `skipLoss` / `skipOptimizer` that key is not read (the workload gives its own).
KerasCompileConfig readKerasCompileConfig(const nlohmann::json& compileConfig, const std::string& file,
                                          const std::string& format = "keras3", bool skipLoss = false,
                                          bool skipOptimizer = false);

}  // namespace ipusim::scheduler
