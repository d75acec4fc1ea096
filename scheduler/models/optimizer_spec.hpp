#pragma once
// The optimizer of a training job, as Keras 3 defines it: the update rule
// (keras/src/optimizers/{sgd,adam,adamw,rmsprop,adagrad,adamax,nadam}.py),
// the learning rate, a number or a schedule
// (keras/src/optimizers/schedules/learning_rate_schedule.py), and what the
// base optimizer does before every update (base_optimizer.py): gradient
// clipping (clipnorm, clipvalue, global_clipnorm) and decoupled weight decay.
// Keras's parameter names and defaults; the graph's updates are built by
// scheduler/graph/optimizer_updates.hpp.
//
// Both formats read an optimizer through readOptimizerOptions() (one set of
// rules: the same keys, defaults, ranges and messages), each giving its own
// view of the object (OptionSource): the workload's `optimizer` and a Keras
// compile_config's optimizer config. Internal to scheduler/.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace ipusim::scheduler {

// A Keras learning-rate schedule, evaluated each step at the optimizer's
// iteration count (0 on the first step, as Keras's `optimizer.iterations`).
struct LearningRateSchedule {
  // "" (no schedule: OptimizerSpec::learningRate) | exponential_decay |
  // piecewise_constant_decay | cosine_decay | polynomial_decay | inverse_time_decay
  std::string type;
  double initialLearningRate = 0;
  double decaySteps = 1;                 // all but piecewise_constant_decay; > 0
  double decayRate = 0;                  // exponential_decay, inverse_time_decay
  bool staircase = false;                // exponential_decay, inverse_time_decay
  std::vector<std::int64_t> boundaries;  // piecewise_constant_decay: strictly increasing steps
  std::vector<double> values;            // piecewise_constant_decay: one more than boundaries
  double alpha = 0;                      // cosine_decay: the final rate as a fraction
  bool warmup = false;                   // cosine_decay: warmup_target given (not null)
  double warmupTarget = 0, warmupSteps = 0;
  double endLearningRate = 0.0001, power = 1;  // polynomial_decay
  bool cycle = false;
  bool enabled() const { return !type.empty(); }
  // Keras's class name of the type ("ExponentialDecay").
  std::string className() const;
};

struct OptimizerSpec {
  std::string type = "sgd";  // sgd | adam | adamw | rmsprop | adagrad | adamax | nadam
  double learningRate = 0.01;  // without a schedule; Keras's default: 0.01 (sgd), else 0.001
  LearningRateSchedule schedule;
  double momentum = 0.0;              // sgd, rmsprop
  bool nesterov = false;              // sgd
  double beta1 = 0.9, beta2 = 0.999;  // adam, adamw, adamax, nadam
  double epsilon = 1e-7;              // all but sgd
  double rho = 0.9;                   // rmsprop
  bool centered = false;              // rmsprop
  double initialAccumulatorValue = 0.1;  // adagrad: the accumulator's starting value
  // Decoupled weight decay (every optimizer; adamw's default 0.004): before
  // the update, w -= w * weight_decay * learning_rate. 0: none (Keras's None).
  double weightDecay = 0;
  // Gradient clipping, at most one (0: none): each gradient to L2 norm at most
  // clipnorm; each element to [-clipvalue, clipvalue]; all gradients together
  // to global norm at most global_clipnorm.
  double clipnorm = 0, clipvalue = 0, globalClipnorm = 0;

  // The rule the device runs: adamw is Adam's (with weight decay).
  std::string rule() const { return type == "adamw" ? "adam" : type; }
  // Slot variables per weight (momentum, Adam's m and v, ...).
  int slots() const;
  // Plain SGD: a ScaledAdd of the gradient by -learning_rate and nothing
  // else (the only optimizer a pipeline takes).
  bool plainSgd() const;
  // Why this optimizer cannot train `replicas` replicas, with gradient
  // accumulation or a pipeline ("" when it can): a pipeline takes plain SGD
  // only; gradient accumulation any rule but clipping (a mini-batch would
  // clip its own gradient, Keras clips the sum) and a rule reading the step
  // count (which counts mini-batches, Keras's iterations count updates);
  // replicas any rule but clipping (Keras clips the replicas' mean).
  std::string multiIpuRefusal(std::uint32_t replicas, bool accumulated, bool pipelined) const;
  // The update reads the step count (bias corrections, a schedule).
  bool readsStepCount() const;
  bool clips() const { return clipnorm > 0 || clipvalue > 0 || globalClipnorm > 0; }
  // For messages: "'adam'", "'sgd' with momentum", "'sgd' with a learning-rate schedule", ...
  std::string describe() const;
};

// Keras's optimizer types (workload names, the lowercase of Keras's classes).
const std::set<std::string>& optimizerTypes();
// The keys of an optimizer of `type` (Keras's constructor arguments but name
// and those of the exponential moving average): "type" is not among them.
std::set<std::string> optimizerKeys(const std::string& type);

// One format's view of an optimizer object: its values by key and how it
// names a key in an error.
class OptionSource {
 public:
  virtual ~OptionSource() = default;
  // The value of `key` (null included), nullptr when absent; the key counts as read.
  virtual const nlohmann::json* find(const std::string& key) = 0;
  // Throws std::invalid_argument naming the file, the object and `key`.
  [[noreturn]] virtual void fail(const std::string& key, const std::string& what) const = 0;
};

// Reads every key of an optimizer of `type` (one of optimizerTypes()) with
// Keras's defaults and checks each value; null is what Keras makes of it
// (no weight decay, no clipping, no warmup; false for the booleans, which
// Keras tests for truth; refused where Keras computes with it, and for
// adamw's weight_decay, which Keras refuses):
// learning_rate a positive number or
// a schedule object ({"type": "exponential_decay", ...} or Keras's
// {"class_name": "ExponentialDecay", "config": {...}}), momentum in [0, 1],
// beta_1, beta_2 and rho in [0, 1), epsilon positive, weight_decay,
// initial_accumulator_value and the clipping values >= 0, at most one
// clipping rule.
OptimizerSpec readOptimizerOptions(const std::string& type, OptionSource& source);

}  // namespace ipusim::scheduler
