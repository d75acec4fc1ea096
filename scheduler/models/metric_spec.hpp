#pragma once
// The metrics of a compile_config (Keras's `metrics`, `weighted_metrics`)
// or a workload's `metrics`: the one set of rules both formats read them
// by. A metric is computed on the device for the model's (first) output and
// outfed beside the loss, as Keras reports it beside the loss:
//   - the accuracy variants ("accuracy", "acc", "categorical_accuracy",
//     "sparse_categorical_accuracy", "binary_accuracy" and their classes)
//     are the accuracy a classification loss already outfeeds (Keras
//     resolves "accuracy" from the loss the same way); one that does not
//     fit the loss (binary_accuracy under a categorical cross-entropy, any
//     accuracy under a regression loss) is refused;
//   - "mae" / "mean_absolute_error" and "mse" / "mean_squared_error" (and
//     MeanAbsoluteError, MeanSquaredError) read the output's predictions
//     (probabilities after the softmax or sigmoid a cross-entropy fuses)
//     against the targets, means over the features and the batch, as
//     keras.metrics computes them; not with class-index labels.
// Any other metric (Precision, Recall, AUC, ...: a file compiled with them
// still trains as Keras trains it) is not computed, and the compile warns,
// naming it. Errors are "<what>" for the caller to place (the key, the file).
#include "scheduler/models/workload.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

// The metrics of `list` (a list of names or serialized metrics; Keras's
// per-output nesting of one output, [[...]], is read as its list) into
// loss.metrics, those that add an outfed value: their canonical names
// ("mean_absolute_error", "mean_squared_error"), in order, once each; and
// into loss.unmodelledMetrics the names of those not computed. `fail(what)`
// throws.
void readMetrics(const nlohmann::json& list, LossSpec& loss, const std::function<void(const std::string&)>& fail);

}  // namespace ipusim::scheduler
