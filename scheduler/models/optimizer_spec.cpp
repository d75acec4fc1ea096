#include "scheduler/models/optimizer_spec.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

using json = nlohmann::json;

std::string joined(const std::set<std::string>& names, const char* separator) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : separator) + n;
  return s;
}

// A bound in a message: 0 and 1, not 0.0 and 1.0.
std::string bound(double v) { return v == std::floor(v) && std::fabs(v) < 1e15 ? std::to_string(std::int64_t(v)) : json(v).dump(); }

// Typed reads with one set of messages, over any object: `find` gives a
// key's value (nullptr when absent), `fail` throws naming the key.
class OptionValues {
 public:
  using Find = std::function<const json*(const std::string&)>;
  using Fail = std::function<void(const std::string&, const std::string&)>;
  OptionValues(Find find, Fail fail) : find_(std::move(find)), fail_(std::move(fail)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    fail_(key, what);
    throw std::logic_error("OptionValues: fail returned");  // fail_ throws
  }
  const json* find(const std::string& key) const { return find_(key); }
  bool given(const std::string& key) const {
    const json* v = find(key);
    return v && !v->is_null();
  }
  double number(const std::string& key, double def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_number()) fail(key, "expected a number, got " + v->dump());
    return v->get<double>();
  }
  double required(const std::string& key) const {
    if (!find(key)) fail(key, "missing (required)");
    return number(key, 0);
  }
  double in(const std::string& key, double v, double lo, double hi, bool hiOpen) const {
    if (!(v >= lo && (hiOpen ? v < hi : v <= hi)))
      fail(key, "expected a number in [" + bound(lo) + ", " + bound(hi) + (hiOpen ? ")" : "]") +
                    ", got " + bound(v));
    return v;
  }
  double positive(const std::string& key, double v) const {
    if (!(v > 0)) fail(key, "expected a positive number, got " + bound(v));
    return v;
  }
  double nonNegative(const std::string& key, double v) const {
    if (!(v >= 0)) fail(key, "expected a number >= 0, got " + bound(v));
    return v;
  }
  // A number >= 0, or null / absent (0: Keras's None).
  double optional(const std::string& key) const { return given(key) ? nonNegative(key, number(key, 0)) : 0; }
  // null is false, as Keras tests these for truth (`if self.nesterov:`, `if self.staircase:`).
  bool boolean(const std::string& key, bool def) const {
    const json* v = find(key);
    if (!v) return def;
    if (v->is_null()) return false;
    if (!v->is_boolean()) fail(key, "expected true or false, got " + v->dump());
    return v->get<bool>();
  }

 private:
  Find find_;
  Fail fail_;
};

// Keras's schedule classes, their workload names and their keys (but "name").
struct ScheduleKind {
  const char* type;
  const char* className;
  std::set<std::string> keys;
};
const std::vector<ScheduleKind>& scheduleKinds() {
  static const std::vector<ScheduleKind> kinds{
      {"exponential_decay", "ExponentialDecay", {"initial_learning_rate", "decay_steps", "decay_rate", "staircase"}},
      {"piecewise_constant_decay", "PiecewiseConstantDecay", {"boundaries", "values"}},
      {"cosine_decay", "CosineDecay", {"initial_learning_rate", "decay_steps", "alpha", "warmup_target", "warmup_steps"}},
      {"polynomial_decay", "PolynomialDecay", {"initial_learning_rate", "decay_steps", "end_learning_rate", "power", "cycle"}},
      {"inverse_time_decay", "InverseTimeDecay", {"initial_learning_rate", "decay_steps", "decay_rate", "staircase"}}};
  return kinds;
}

void checkKeys(const json& object, const std::set<std::string>& keys, const std::string& prefix, const OptionValues& o) {
  for (auto it = object.begin(); it != object.end(); ++it)
    if (!keys.count(it.key())) o.fail(prefix + it.key(), "unknown key (valid keys here: " + joined(keys, ", ") + ")");
}

// optimizer.learning_rate as an object: {"type": "<workload name>", keys...}
// or as Keras serializes a schedule, {"class_name": "<class>", "config": {keys...}}.
LearningRateSchedule readSchedule(const json& v, const OptionValues& parent) {
  const bool keras = v.contains("class_name");
  const ScheduleKind* kind = nullptr;
  std::set<std::string> classes, types;
  for (const ScheduleKind& k : scheduleKinds()) {
    classes.insert(k.className);
    types.insert(k.type);
  }
  const std::string nameKey = keras ? "learning_rate.class_name" : "learning_rate.type";
  const json* name = keras ? &v.at("class_name") : v.contains("type") ? &v.at("type") : nullptr;
  if (!name) parent.fail(nameKey, "missing (a schedule names its type: " + joined(types, " | ") + ")");
  if (!name->is_string()) parent.fail(nameKey, "expected a string, got " + name->dump());
  for (const ScheduleKind& k : scheduleKinds())
    if (name->get<std::string>() == (keras ? k.className : k.type)) kind = &k;
  if (!kind)
    parent.fail(nameKey, name->dump() + " is not a learning-rate schedule ipusim models (supported: " +
                             joined(keras ? classes : types, ", ") + ")");
  std::string prefix = "learning_rate.";
  const json* config = &v;
  std::set<std::string> keys = kind->keys;
  keys.insert("name");
  if (keras) {
    checkKeys(v, {"module", "class_name", "config", "registered_name"}, prefix, parent);
    if (!v.contains("config") || !v.at("config").is_object())
      parent.fail(prefix + "config", "expected the schedule's config (an object)");
    config = &v.at("config");
    prefix += "config.";
  } else {
    keys.insert("type");
  }
  checkKeys(*config, keys, prefix, parent);
  const OptionValues o([config](const std::string& key) { return config->contains(key) ? &config->at(key) : nullptr; },
                  [&parent, prefix](const std::string& key, const std::string& what) { parent.fail(prefix + key, what); });
  if (const json* n = o.find("name"); n && !n->is_string() && !n->is_null())
    o.fail("name", "expected a string, got " + n->dump());

  LearningRateSchedule s;
  s.type = kind->type;
  if (s.type == "piecewise_constant_decay") {
    const json* b = o.find("boundaries");
    const json* values = o.find("values");
    if (!b) o.fail("boundaries", "missing (required)");
    if (!values) o.fail("values", "missing (required)");
    if (!b->is_array() || b->empty()) o.fail("boundaries", "expected a non-empty list of steps, got " + b->dump());
    for (const json& e : *b) {
      if (!e.is_number_integer() || e.get<std::int64_t>() < 0 || e.get<std::int64_t>() > 0x7fffffffll)
        o.fail("boundaries", "expected steps (integers in [0, 2147483647]), got " + b->dump());
      if (!s.boundaries.empty() && e.get<std::int64_t>() <= s.boundaries.back())
        o.fail("boundaries", "expected strictly increasing steps, got " + b->dump());
      s.boundaries.push_back(e.get<std::int64_t>());
    }
    if (!values->is_array() || values->size() != b->size() + 1)
      o.fail("values", "expected a list of one more value than boundaries (" + std::to_string(b->size() + 1) +
                           "), got " + values->dump());
    for (const json& e : *values) {
      if (!e.is_number() || !(e.get<double>() >= 0)) o.fail("values", "expected numbers >= 0, got " + values->dump());
      s.values.push_back(e.get<double>());
    }
    return s;
  }
  s.initialLearningRate = o.nonNegative("initial_learning_rate", o.required("initial_learning_rate"));
  s.decaySteps = o.positive("decay_steps", o.required("decay_steps"));
  if (s.type == "exponential_decay" || s.type == "inverse_time_decay") {
    const double rate = o.required("decay_rate");
    s.decayRate = s.type == "exponential_decay" ? o.positive("decay_rate", rate) : o.nonNegative("decay_rate", rate);
    s.staircase = o.boolean("staircase", false);
  } else if (s.type == "cosine_decay") {
    s.alpha = o.in("alpha", o.number("alpha", 0.0), 0, 1, false);
    s.warmup = o.given("warmup_target");
    if (s.warmup) s.warmupTarget = o.nonNegative("warmup_target", o.number("warmup_target", 0));
    s.warmupSteps = o.nonNegative("warmup_steps", o.number("warmup_steps", 0));
  } else {  // polynomial_decay
    s.endLearningRate = o.nonNegative("end_learning_rate", o.number("end_learning_rate", 0.0001));
    s.power = o.nonNegative("power", o.number("power", 1.0));
    s.cycle = o.boolean("cycle", false);
  }
  return s;
}

}  // namespace

std::string LearningRateSchedule::className() const {
  for (const ScheduleKind& k : scheduleKinds())
    if (type == k.type) return k.className;
  return "";
}

int OptimizerSpec::slots() const {
  const std::string r = rule();
  if (r == "sgd") return momentum > 0 ? 1 : 0;
  if (r == "rmsprop") return 1 + (centered ? 1 : 0) + (momentum > 0 ? 1 : 0);
  if (r == "adagrad") return 1;
  return 2;  // adam, adamax, nadam
}

bool OptimizerSpec::plainSgd() const {
  return type == "sgd" && momentum == 0 && !schedule.enabled() && weightDecay == 0 && !clips();
}

std::string OptimizerSpec::multiIpuRefusal(std::uint32_t replicas, bool accumulated, bool pipelined) const {
  if (pipelined && !plainSgd())
    return "pipelining supports plain SGD only (type sgd, momentum 0, a constant learning rate, no weight_decay or "
           "clipping), got " + describe();
  if (accumulated && clips())
    return "training.gradient_accumulation_count with gradient clipping is not modelled (each mini-batch would clip "
           "its own gradient, where Keras clips the accumulated one), got " + describe() +
           ": leave clipnorm, clipvalue and global_clipnorm unset or accumulate no gradients";
  if (accumulated && !plainSgd() && readsStepCount())
    return "training.gradient_accumulation_count with an optimizer that reads the step count (Adam's, Adamax's and "
           "Nadam's bias corrections, a learning-rate schedule) is not modelled (the step counter counts mini-batches, "
           "Keras's iterations count weight updates), got " + describe() +
           ": use SGD (with momentum or weight decay), RMSprop or Adagrad with a constant learning rate";
  if (replicas > 1 && clips())
    return "replication (ipu.num_ipus, " + std::to_string(replicas) + " replicas) with gradient clipping is not "
           "modelled (each replica would clip its own gradient, where Keras clips the replicas' mean), got " +
           describe() + ": leave clipnorm, clipvalue and global_clipnorm unset or train one replica";
  return "";
}

bool OptimizerSpec::readsStepCount() const {
  const std::string r = rule();
  return r == "adam" || r == "adamax" || r == "nadam" || schedule.enabled();
}

std::string OptimizerSpec::describe() const {
  std::string d = "'" + type + "'";
  std::vector<std::string> with;
  if (type == "sgd" && momentum != 0) with.push_back("momentum");
  if (schedule.enabled()) with.push_back("a learning-rate schedule");
  if (weightDecay != 0) with.push_back("weight_decay");
  if (clipnorm > 0) with.push_back("clipnorm");
  if (clipvalue > 0) with.push_back("clipvalue");
  if (globalClipnorm > 0) with.push_back("global_clipnorm");
  for (std::size_t i = 0; i < with.size(); ++i) d += (i == 0 ? " with " : i + 1 == with.size() ? " and " : ", ") + with[i];
  return d;
}

const std::set<std::string>& optimizerTypes() {
  static const std::set<std::string> types{"sgd", "adam", "adamw", "rmsprop", "adagrad", "adamax", "nadam"};
  return types;
}

std::set<std::string> optimizerKeys(const std::string& type) {
  std::set<std::string> keys{"learning_rate", "weight_decay", "clipnorm", "clipvalue", "global_clipnorm"};
  std::set<std::string> own;
  if (type == "sgd") own = {"momentum", "nesterov"};
  else if (type == "adam" || type == "adamw") own = {"beta_1", "beta_2", "epsilon", "amsgrad"};
  else if (type == "rmsprop") own = {"rho", "momentum", "epsilon", "centered"};
  else if (type == "adagrad") own = {"initial_accumulator_value", "epsilon"};
  else own = {"beta_1", "beta_2", "epsilon"};  // adamax, nadam
  keys.insert(own.begin(), own.end());
  return keys;
}

OptimizerSpec readOptimizerOptions(const std::string& type, OptionSource& source) {
  if (!optimizerTypes().count(type)) throw std::logic_error("readOptimizerOptions: unknown type " + type);
  const OptionValues o([&source](const std::string& key) { return source.find(key); },
                  [&source](const std::string& key, const std::string& what) { source.fail(key, what); });
  OptimizerSpec s;
  s.type = type;
  s.learningRate = type == "sgd" ? 0.01 : 0.001;  // Keras's defaults
  if (const json* lr = o.find("learning_rate"); lr && lr->is_object())
    s.schedule = readSchedule(*lr, o);
  else
    s.learningRate = o.positive("learning_rate", o.number("learning_rate", s.learningRate));
  if (type == "sgd") {
    s.momentum = o.in("momentum", o.number("momentum", 0.0), 0, 1, false);
    s.nesterov = o.boolean("nesterov", false);
  } else if (type == "rmsprop") {
    s.rho = o.in("rho", o.number("rho", s.rho), 0, 1, true);
    s.momentum = o.in("momentum", o.number("momentum", 0.0), 0, 1, false);
    s.centered = o.boolean("centered", false);
  } else if (type == "adagrad") {
    s.initialAccumulatorValue = o.nonNegative("initial_accumulator_value", o.number("initial_accumulator_value", 0.1));
  } else {  // adam, adamw, adamax, nadam
    s.beta1 = o.in("beta_1", o.number("beta_1", s.beta1), 0, 1, true);
    s.beta2 = o.in("beta_2", o.number("beta_2", s.beta2), 0, 1, true);
    if ((type == "adam" || type == "adamw") && o.boolean("amsgrad", false))
      o.fail("amsgrad", "true is not modelled (only amsgrad=false)");
  }
  if (type != "sgd") s.epsilon = o.positive("epsilon", o.number("epsilon", s.epsilon));
  // Decoupled weight decay: AdamW's is required (Keras refuses None), 0.004 by default.
  if (type == "adamw" && o.find("weight_decay") && o.find("weight_decay")->is_null())
    o.fail("weight_decay", "null is refused by Keras's AdamW (it needs a number; 0.004 by default)");
  s.weightDecay = type == "adamw" && !o.find("weight_decay") ? 0.004 : o.optional("weight_decay");
  s.clipnorm = o.optional("clipnorm");
  s.clipvalue = o.optional("clipvalue");
  s.globalClipnorm = o.optional("global_clipnorm");
  // As Keras: at most one of the three may be set (a 0 is set, and clips nothing).
  std::vector<std::string> set;
  for (const char* k : {"clipnorm", "clipvalue", "global_clipnorm"})
    if (o.given(k)) set.push_back(k);
  if (set.size() > 1)
    o.fail(set[1], "only one of clipnorm, clipvalue and global_clipnorm can be set (" + set[0] + " is too), as Keras requires");
  return s;
}

}  // namespace ipusim::scheduler
