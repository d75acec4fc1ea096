#include "scheduler/models/keras_compile.hpp"

#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_parts.hpp"

#include <map>

namespace ipusim::scheduler {
namespace {

using json = nlohmann::json;

// Keras's optimizer names (keras.optimizers.get) and classes -> ipusim's type.
const std::map<std::string, std::string> kOptimizers{
    {"sgd", "sgd"},         {"SGD", "sgd"},         {"adam", "adam"},       {"Adam", "adam"},
    {"adamw", "adamw"},     {"AdamW", "adamw"},     {"rmsprop", "rmsprop"}, {"RMSprop", "rmsprop"},
    {"adagrad", "adagrad"}, {"Adagrad", "adagrad"}, {"adamax", "adamax"},   {"Adamax", "adamax"},
    {"nadam", "nadam"},     {"Nadam", "nadam"}};

// An optimizer's config as readOptimizerOptions() reads it: the keys it
// reads count as used (KerasConfig::check refuses the others).
class KerasOptions final : public OptionSource {
 public:
  KerasOptions(KerasConfig& c, const json& config) : c_(c), config_(config) {}
  const json* find(const std::string& key) override {
    c_.ignore({key.c_str()});
    return config_.contains(key) ? &config_.at(key) : nullptr;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const override { c_.fail(key, what); }

 private:
  KerasConfig& c_;
  const json& config_;
};

OptimizerSpec readOptimizer(const json& v, const std::string& file) {
  const std::string where = "compile_config.optimizer";
  const std::string name = v.is_string() ? v.get<std::string>() : kerasClassName(v);
  auto it = kOptimizers.find(name);
  if (it == kOptimizers.end())
    throw std::invalid_argument(file + ": " + where + ": " + v.dump().substr(0, 200) +
                                " is not modelled (supported: SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, Nadam)");
  if (v.is_string()) {  // Keras's defaults
    static const json empty = json::object();
    KerasConfig c(empty, file, where + " (" + name + ")");
    KerasOptions source(c, empty);
    return readOptimizerOptions(it->second, source);
  }
  if (!v.contains("config")) throw std::invalid_argument(file + ": " + where + ": no config in " + v.dump());
  KerasConfig c(v.at("config"), file, where + " (" + name + ")");
  // Names, compilation and the exponential moving average's settings when it is off.
  c.ignore({"name", "ema_momentum", "ema_overwrite_frequency", "jit_compile", "is_legacy_optimizer", "decay"});
  if (c.has("decay") && c.at("decay") != json(0.0) && c.at("decay") != json(0))
    c.fail("decay", c.at("decay").dump() + " is not modelled (a learning-rate decay); only 0 is");
  c.requireValue("use_ema", false, "an exponential moving average of the weights");
  c.requireNull("loss_scale_factor", "loss scaling");
  c.requireNull("gradient_accumulation_steps", "gradient accumulation");
  KerasOptions source(c, v.at("config"));
  const OptimizerSpec o = readOptimizerOptions(it->second, source);
  c.check();
  return o;
}

// Keras's loss names (functions and aliases) and classes -> ipusim's type.
const std::map<std::string, std::string> kLosses{
    {"sparse_categorical_crossentropy", "sparse_categorical_crossentropy"},
    {"SparseCategoricalCrossentropy", "sparse_categorical_crossentropy"},
    {"categorical_crossentropy", "categorical_crossentropy"},
    {"CategoricalCrossentropy", "categorical_crossentropy"},
    {"binary_crossentropy", "binary_crossentropy"},
    {"BinaryCrossentropy", "binary_crossentropy"},
    {"mean_squared_error", "mean_squared_error"},
    {"mse", "mean_squared_error"},
    {"MeanSquaredError", "mean_squared_error"},
    {"mean_absolute_error", "mean_absolute_error"},
    {"mae", "mean_absolute_error"},
    {"MeanAbsoluteError", "mean_absolute_error"},
    {"huber", "huber"},
    {"huber_loss", "huber"},
    {"Huber", "huber"},
    {"kl_divergence", "kl_divergence"},
    {"kld", "kl_divergence"},
    {"KLD", "kl_divergence"},
    {"kullback_leibler_divergence", "kl_divergence"},
    {"KLDivergence", "kl_divergence"}};

LossSpec readLoss(const json& v, const std::string& file) {
  const std::string where = "compile_config.loss";
  std::string name = v.is_string() ? v.get<std::string>() : kerasClassName(v);
  // A serialized loss function: {"class_name": "function", "config": "mse"}.
  if (name == "function" && v.contains("config") && v.at("config").is_string()) name = v.at("config").get<std::string>();
  auto it = kLosses.find(name);
  if (it == kLosses.end())
    throw std::invalid_argument(file + ": " + where + ": " + v.dump().substr(0, 200) +
                                " is not modelled (supported: sparse_categorical_crossentropy, "
                                "categorical_crossentropy, binary_crossentropy, mean_squared_error, "
                                "mean_absolute_error, huber, kl_divergence)");
  LossSpec loss;
  loss.type = it->second;
  if (v.is_string() || kerasClassName(v) == "function") return loss;
  if (!v.contains("config")) throw std::invalid_argument(file + ": " + where + ": no config in " + v.dump());
  KerasConfig c(v.at("config"), file, where + " (" + name + ")");
  c.ignore({"name", "dtype", "fn"});
  if (c.isNull("reduction"))  // Keras 3: no reduction, a loss per example
    c.fail("reduction", "null (one loss per example, not reduced) is not modelled (supported: auto | sum_over_batch_size)");
  c.oneOf("reduction", "sum_over_batch_size", {"sum_over_batch_size", "auto"});
  const auto given = [&](const std::string& key) { return c.has(key); };
  loss.fromLogits = c.boolean("from_logits", false);
  c.requireNull("ignore_class", "ignored classes");
  // None: no smoothing (Keras tests it for truth: `if label_smoothing:`).
  if (c.isNull("label_smoothing")) c.ignore({"label_smoothing"});
  else loss.labelSmoothing = c.number("label_smoothing", 0);
  loss.delta = c.number("delta", loss.delta);
  // (Keras writes label_smoothing: 0 and from_logits: false where they mean nothing.)
  checkLossKeys(
      loss,
      [&](const std::string& key) {
        if (key == "label_smoothing") return given(key) && loss.labelSmoothing != 0;
        if (key == "from_logits") return given(key) && loss.fromLogits;
        return given(key);
      },
      [&](const std::string& key, const std::string& what) { c.fail(key, what); });
  c.requireValue("axis", -1, "a class axis other than the last");
  c.check();
  return loss;
}

}  // namespace

KerasCompileConfig readKerasCompileConfig(const json& compileConfig, const std::string& file, const std::string& format,
                                          bool skipLoss, bool skipOptimizer) {
  KerasCompileConfig out;
  KerasConfig c(compileConfig, file, "compile_config");
  // The metrics are read against the loss the workload ends with; the rest are execution choices.
  c.ignore({"metrics", "weighted_metrics", "run_eagerly", "jit_compile", "auto_scale_loss", "optimizer", "loss"});
  for (const char* key : {"metrics", "weighted_metrics"}) {
    if (!c.has(key)) continue;
    const json& list = c.at(key);
    if (!list.is_array()) c.fail(key, "expected a list of metrics, got " + list.dump());
    // One output's list, nested as Keras nests them per output.
    const json& metrics = list.size() == 1 && list[0].is_array() ? list[0] : list;
    for (const json& m : metrics) out.metrics.push_back(m);
  }
  c.requireNull("loss_weights", "weighted losses");
  if (c.has("optimizer") && !skipOptimizer) out.optimizer = readOptimizer(c.at("optimizer"), file);
  if (c.has("loss") && !skipLoss) out.loss = readLoss(c.at("loss"), file);
  // Absent: 0, not given (ipusim's training.steps_per_execution then applies).
  // None: TF 2.x's compile runs `steps_per_execution or 1`; Keras 3 compares it with 1 and fails.
  const bool tf2None = format == "tf2" && c.isNull("steps_per_execution");
  if (tf2None) c.ignore({"steps_per_execution"});
  const std::int64_t spe = tf2None ? 1 : c.integer("steps_per_execution", 0);
  if (c.has("steps_per_execution") && spe <= 0)
    c.fail("steps_per_execution", "expected a positive integer, got " + c.at("steps_per_execution").dump());
  // The bound of training.steps_per_execution (a 32-bit count), said as its
  // reader says it: 10^12, a positive integer, was "expected a positive integer".
  if (c.has("steps_per_execution") && spe > 0xffffffffll)
    c.fail("steps_per_execution", c.at("steps_per_execution").dump() + " is more than 4294967295");
  out.stepsPerExecution = std::uint32_t(spe);
  c.check();
  return out;
}

}  // namespace ipusim::scheduler
