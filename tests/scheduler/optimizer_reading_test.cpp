// Reading optimizers, learning-rate schedules, clipping and weight decay from
// both formats (issue 32): the workload's `optimizer` and a Keras 3
// compile_config, with Keras's names and defaults, and one set of rules: a
// value the workload refuses is refused from the Keras file with the same
// message, each naming the file and the key.
#include "scheduler/compiler.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

namespace ipusim::scheduler::optimizer_reading_test {
namespace {

using nlohmann::json;

std::string src(const std::string& rel) { return std::string(IPUSIM_SOURCE_DIR) + "/" + rel; }

json readJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

json job(const json& optimizer) {
  json j = json::parse(R"({
    "dataset": {"format": "synthetic", "batch_size": 8, "features": 64, "classes": 10, "examples": 64},
    "model": {"layers": [{"type": "dense", "units": 10, "activation": "softmax"}]},
    "training": {"steps": 20, "steps_per_execution": 4}})");
  j["optimizer"] = optimizer;
  return j;
}

OptimizerSpec fromWorkload(const json& optimizer) { return parseWorkload(job(optimizer), "optimizers.json").optimizer; }

std::string workloadError(const json& optimizer) {
  try {
    parseWorkload(job(optimizer), "optimizers.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

// The Keras 3 MLP compiled with `compile_config` (tests/data/keras/make_optimizers.py).
json kerasModel(const json& compileConfig) {
  json j = readJson(src("tests/data/keras/optimizers_keras3.json"));
  j["compile_config"] = compileConfig;
  return j;
}

json compileConfig(const std::string& name) {
  return readJson(src("tests/data/keras/optimizer_compile_configs.json")).at(name);
}

OptimizerSpec fromKeras(const std::string& name) {
  const KerasModel m = parseKerasModel(kerasModel(compileConfig(name)), "model.json");
  if (!m.optimizer) throw std::logic_error("no optimizer");
  return *m.optimizer;
}

// The Keras 3 optimizer object of `keras_class` with its config's `key` set to `value`.
std::string kerasError(const std::string& kerasClass, const std::string& key, const json& value) {
  json config = compileConfig("adam_plain");
  json& o = config["optimizer"];
  o["class_name"] = kerasClass;
  json& c = o["config"];
  for (const char* k : {"beta_1", "beta_2", "epsilon", "amsgrad"}) c.erase(k);
  if (kerasClass == "SGD") c.update({{"momentum", 0.0}, {"nesterov", false}});
  if (kerasClass == "RMSprop") c.update({{"rho", 0.9}, {"momentum", 0.0}, {"epsilon", 1e-7}, {"centered", false}});
  if (kerasClass == "Adagrad") c.update({{"initial_accumulator_value", 0.1}, {"epsilon", 1e-7}});
  if (kerasClass == "Adam" || kerasClass == "AdamW")
    c.update({{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}, {"amsgrad", false}});
  if (kerasClass == "Adamax" || kerasClass == "Nadam") c.update({{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}});
  c[key] = value;
  try {
    parseKerasModel(kerasModel(config), "model.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

void expectMentions(const std::string& message, const std::vector<std::string>& fragments) {
  for (const auto& f : fragments) EXPECT_NE(message.find(f), std::string::npos) << "'" << f << "' not in: " << message;
}

// ---- the workload format ----

TEST(OptimizerReading, KerasDefaultsPerType) {
  OptimizerSpec o = fromWorkload({{"type", "adamw"}});
  EXPECT_EQ(o.type, "adamw");
  EXPECT_EQ(o.rule(), "adam");
  EXPECT_DOUBLE_EQ(o.learningRate, 0.001);
  EXPECT_DOUBLE_EQ(o.weightDecay, 0.004);  // AdamW's default
  EXPECT_DOUBLE_EQ(o.beta1, 0.9);
  EXPECT_DOUBLE_EQ(o.beta2, 0.999);
  EXPECT_DOUBLE_EQ(o.epsilon, 1e-7);
  o = fromWorkload({{"type", "adagrad"}});
  EXPECT_DOUBLE_EQ(o.learningRate, 0.001);
  EXPECT_DOUBLE_EQ(o.initialAccumulatorValue, 0.1);
  EXPECT_DOUBLE_EQ(o.weightDecay, 0);
  EXPECT_EQ(o.slots(), 1);
  for (const char* type : {"adamax", "nadam"}) {
    o = fromWorkload({{"type", type}});
    EXPECT_DOUBLE_EQ(o.learningRate, 0.001) << type;
    EXPECT_EQ(o.slots(), 2) << type;
    EXPECT_TRUE(o.readsStepCount()) << type;
  }
  o = fromWorkload({{"type", "sgd"}});
  EXPECT_DOUBLE_EQ(o.learningRate, 0.01);
  EXPECT_TRUE(o.plainSgd());
  EXPECT_FALSE(o.schedule.enabled());
  EXPECT_FALSE(o.clips());
}

TEST(OptimizerReading, WeightDecayAndClippingOnEveryOptimizer) {
  for (const char* type : {"sgd", "adam", "rmsprop", "adagrad", "adamax", "nadam"}) {
    const OptimizerSpec o = fromWorkload({{"type", type}, {"weight_decay", 0.01}, {"clipnorm", 1.5}});
    EXPECT_DOUBLE_EQ(o.weightDecay, 0.01) << type;
    EXPECT_DOUBLE_EQ(o.clipnorm, 1.5) << type;
    EXPECT_FALSE(o.plainSgd()) << type;
  }
  EXPECT_DOUBLE_EQ(fromWorkload({{"type", "adamw"}, {"weight_decay", 0.1}}).weightDecay, 0.1);
  EXPECT_DOUBLE_EQ(fromWorkload({{"type", "sgd"}, {"clipvalue", 0.5}}).clipvalue, 0.5);
  EXPECT_DOUBLE_EQ(fromWorkload({{"type", "sgd"}, {"global_clipnorm", 2.0}}).globalClipnorm, 2.0);
  // null is Keras's None: no decay, no clipping.
  const OptimizerSpec none = fromWorkload({{"type", "adam"}, {"weight_decay", nullptr}, {"clipnorm", nullptr}});
  EXPECT_DOUBLE_EQ(none.weightDecay, 0);
  EXPECT_FALSE(none.clips());
}

TEST(OptimizerReading, ScheduleInEitherForm) {
  const OptimizerSpec a = fromWorkload(
      {{"type", "sgd"},
       {"learning_rate", {{"type", "exponential_decay"}, {"initial_learning_rate", 0.1}, {"decay_steps", 100}, {"decay_rate", 0.96}}}});
  const OptimizerSpec b = fromWorkload(
      {{"type", "sgd"},
       {"learning_rate",
        {{"class_name", "ExponentialDecay"},
         {"config", {{"initial_learning_rate", 0.1}, {"decay_steps", 100}, {"decay_rate", 0.96}, {"name", "ExponentialDecay"}}}}}});
  for (const OptimizerSpec& o : {a, b}) {
    EXPECT_EQ(o.schedule.type, "exponential_decay");
    EXPECT_EQ(o.schedule.className(), "ExponentialDecay");
    EXPECT_DOUBLE_EQ(o.schedule.initialLearningRate, 0.1);
    EXPECT_DOUBLE_EQ(o.schedule.decaySteps, 100);
    EXPECT_DOUBLE_EQ(o.schedule.decayRate, 0.96);
    EXPECT_FALSE(o.schedule.staircase);
    EXPECT_TRUE(o.readsStepCount());
    EXPECT_FALSE(o.plainSgd());
  }
  const OptimizerSpec p = fromWorkload(
      {{"type", "adam"},
       {"learning_rate", {{"type", "piecewise_constant_decay"}, {"boundaries", {100, 200}}, {"values", {0.1, 0.01, 0.001}}}}});
  EXPECT_EQ(p.schedule.boundaries, (std::vector<std::int64_t>{100, 200}));
  EXPECT_EQ(p.schedule.values, (std::vector<double>{0.1, 0.01, 0.001}));
  const OptimizerSpec c = fromWorkload(
      {{"type", "adam"},
       {"learning_rate", {{"type", "cosine_decay"}, {"initial_learning_rate", 0.0}, {"decay_steps", 1000}, {"warmup_target", 0.1},
                          {"warmup_steps", 100}}}});
  EXPECT_TRUE(c.schedule.warmup);
  EXPECT_DOUBLE_EQ(c.schedule.warmupTarget, 0.1);
  EXPECT_DOUBLE_EQ(c.schedule.warmupSteps, 100);
  EXPECT_DOUBLE_EQ(c.schedule.alpha, 0);
  const OptimizerSpec poly = fromWorkload(
      {{"type", "sgd"}, {"learning_rate", {{"type", "polynomial_decay"}, {"initial_learning_rate", 0.1}, {"decay_steps", 10}}}});
  EXPECT_DOUBLE_EQ(poly.schedule.endLearningRate, 0.0001);  // Keras's defaults
  EXPECT_DOUBLE_EQ(poly.schedule.power, 1.0);
  EXPECT_FALSE(poly.schedule.cycle);
}

// ---- Keras 3 compile_configs ----

TEST(OptimizerReading, KerasCompileConfigs) {
  OptimizerSpec o = fromKeras("adamw_cosine_warmup_global_clipnorm");
  EXPECT_EQ(o.type, "adamw");
  EXPECT_DOUBLE_EQ(o.weightDecay, 0.004);
  EXPECT_DOUBLE_EQ(o.globalClipnorm, 0.5);
  EXPECT_EQ(o.schedule.type, "cosine_decay");
  EXPECT_TRUE(o.schedule.warmup);
  EXPECT_DOUBLE_EQ(o.schedule.warmupTarget, 0.005);
  EXPECT_DOUBLE_EQ(o.schedule.warmupSteps, 5);
  EXPECT_DOUBLE_EQ(o.schedule.decaySteps, 10);

  o = fromKeras("adagrad_exponential_clipnorm");
  EXPECT_EQ(o.type, "adagrad");
  EXPECT_DOUBLE_EQ(o.clipnorm, 0.1);
  EXPECT_DOUBLE_EQ(o.initialAccumulatorValue, 0.1);
  EXPECT_EQ(o.schedule.type, "exponential_decay");
  EXPECT_TRUE(o.schedule.staircase);

  o = fromKeras("adamax_piecewise_clipvalue");
  EXPECT_EQ(o.type, "adamax");
  EXPECT_DOUBLE_EQ(o.clipvalue, 0.01);
  EXPECT_EQ(o.schedule.type, "piecewise_constant_decay");
  EXPECT_EQ(o.schedule.boundaries, (std::vector<std::int64_t>{6, 14}));

  o = fromKeras("nadam_polynomial_weight_decay");
  EXPECT_EQ(o.type, "nadam");
  EXPECT_DOUBLE_EQ(o.weightDecay, 0.1);
  EXPECT_EQ(o.schedule.type, "polynomial_decay");
  EXPECT_DOUBLE_EQ(o.schedule.power, 0.5);
  EXPECT_DOUBLE_EQ(o.schedule.endLearningRate, 0.0005);

  o = fromKeras("sgd_inverse_time_nesterov_weight_decay");
  EXPECT_EQ(o.type, "sgd");
  EXPECT_TRUE(o.nesterov);
  EXPECT_DOUBLE_EQ(o.momentum, 0.9);
  EXPECT_EQ(o.schedule.type, "inverse_time_decay");

  o = fromKeras("adam_plain");
  EXPECT_EQ(o.type, "adam");
  EXPECT_FALSE(o.schedule.enabled());
  EXPECT_NEAR(o.learningRate, 0.002, 1e-9);
  EXPECT_FALSE(o.clips());
}

TEST(OptimizerReading, KerasOptimizerNames) {
  for (const auto& [name, type] : std::vector<std::pair<std::string, std::string>>{
           {"adamw", "adamw"}, {"adagrad", "adagrad"}, {"adamax", "adamax"}, {"nadam", "nadam"}}) {
    json config = compileConfig("adam_plain");
    config["optimizer"] = name;
    const KerasModel m = parseKerasModel(kerasModel(config), "model.json");
    ASSERT_TRUE(m.optimizer);
    EXPECT_EQ(m.optimizer->type, type);
    EXPECT_DOUBLE_EQ(m.optimizer->learningRate, 0.001);
    EXPECT_DOUBLE_EQ(m.optimizer->weightDecay, type == "adamw" ? 0.004 : 0.0);
  }
}

// A workload naming the Keras file takes its compile_config's optimizer (schedule and all).
TEST(OptimizerReading, WorkloadTakesTheKerasOptimizer) {
  json j = {{"model", {{"keras", "optimizers_keras3.json"}}}, {"dataset", {{"format", "synthetic"}}}};
  const Workload w = parseWorkload(j, "w.json", src("tests/data/keras"));
  EXPECT_EQ(w.optimizer.type, "adam");
  EXPECT_EQ(w.training.stepsPerExecution, 4u);
}

// ---- one set of rules ----

struct BadValue {
  std::string type, kerasClass, key;
  json value;
  std::string what;  // a fragment of the message both formats give
};

TEST(OptimizerReadingErrors, TheSameValuesRefusedWithTheSameMessages) {
  const json decayZero = {{"class_name", "ExponentialDecay"},
                          {"config", {{"initial_learning_rate", 0.1}, {"decay_steps", 0}, {"decay_rate", 0.5}}}};
  const json shortValues = {{"class_name", "PiecewiseConstantDecay"}, {"config", {{"boundaries", {10, 20}}, {"values", {0.1, 0.01}}}}};
  const json noRate = {{"class_name", "InverseTimeDecay"}, {"config", {{"initial_learning_rate", 0.1}, {"decay_steps", 10}}}};
  const json restarts = {{"class_name", "CosineDecayRestarts"}, {"config", {{"initial_learning_rate", 0.1}, {"first_decay_steps", 10}}}};
  const json bigAlpha = {{"class_name", "CosineDecay"}, {"config", {{"initial_learning_rate", 0.1}, {"decay_steps", 10}, {"alpha", 2}}}};
  const json unordered = {{"class_name", "PiecewiseConstantDecay"}, {"config", {{"boundaries", {20, 10}}, {"values", {1, 2, 3}}}}};
  const json unknownKey = {{"class_name", "PolynomialDecay"},
                           {"config", {{"initial_learning_rate", 0.1}, {"decay_steps", 10}, {"decay_power", 2}}}};
  const std::vector<BadValue> bad{
      {"rmsprop", "RMSprop", "rho", 1, "expected a number in [0, 1), got 1"},
      {"rmsprop", "RMSprop", "epsilon", 0, "expected a positive number, got 0"},
      {"adam", "Adam", "beta_1", 1.0, "expected a number in [0, 1), got 1"},
      {"nadam", "Nadam", "beta_2", -0.1, "expected a number in [0, 1), got -0.1"},
      {"adamax", "Adamax", "epsilon", -1e-7, "expected a positive number"},
      {"sgd", "SGD", "momentum", 1.5, "expected a number in [0, 1], got 1.5"},
      {"sgd", "SGD", "learning_rate", 0, "expected a positive number, got 0"},
      {"adagrad", "Adagrad", "initial_accumulator_value", -0.5, "expected a number >= 0, got -0.5"},
      {"nadam", "Nadam", "weight_decay", -0.1, "expected a number >= 0, got -0.1"},
      {"adamax", "Adamax", "clipnorm", -1, "expected a number >= 0, got -1"},
      {"adam", "Adam", "amsgrad", true, "true is not modelled"},
      {"adamw", "AdamW", "weight_decay", nullptr, "null is refused by Keras's AdamW"},
      {"adam", "Adam", "epsilon", nullptr, "expected a number, got null"},
      {"sgd", "SGD", "nesterov", "yes", "expected true or false"},
      {"sgd", "SGD", "learning_rate", decayZero, "learning_rate.config.decay_steps: expected a positive number, got 0"},
      {"sgd", "SGD", "learning_rate", shortValues, "learning_rate.config.values: expected a list of one more value than boundaries"},
      {"sgd", "SGD", "learning_rate", noRate, "learning_rate.config.decay_rate: missing (required)"},
      {"sgd", "SGD", "learning_rate", restarts, "\"CosineDecayRestarts\" is not a learning-rate schedule ipusim models"},
      {"sgd", "SGD", "learning_rate", bigAlpha, "learning_rate.config.alpha: expected a number in [0, 1], got 2"},
      {"sgd", "SGD", "learning_rate", unordered, "learning_rate.config.boundaries: expected strictly increasing steps"},
      {"sgd", "SGD", "learning_rate", unknownKey, "learning_rate.config.decay_power: unknown key"},
  };
  for (const BadValue& b : bad) {
    json optimizer = {{"type", b.type}, {b.key, b.value}};
    const std::string fromWorkloadFile = workloadError(optimizer);
    const std::string fromKerasFile = kerasError(b.kerasClass, b.key, b.value);
    expectMentions(fromWorkloadFile, {"optimizers.json: optimizer." + b.key, b.what});
    expectMentions(fromKerasFile, {"model.json: compile_config.optimizer (" + b.kerasClass + "): " + b.key, b.what});
    // The same message after the key, in both formats.
    const std::string at = b.key + (b.value.is_object() ? "." : ": ");
    const std::size_t inWorkload = fromWorkloadFile.find(at), inKeras = fromKerasFile.find(at);
    ASSERT_NE(inWorkload, std::string::npos) << fromWorkloadFile;
    ASSERT_NE(inKeras, std::string::npos) << fromKerasFile;
    EXPECT_EQ(fromWorkloadFile.substr(inWorkload), fromKerasFile.substr(inKeras)) << b.key;
  }
}

TEST(OptimizerReadingErrors, OneClippingRuleAtMost) {
  const std::string w = workloadError({{"type", "sgd"}, {"clipnorm", 1.0}, {"clipvalue", 0.5}});
  expectMentions(w, {"optimizers.json: optimizer.clipvalue", "only one of clipnorm, clipvalue and global_clipnorm"});
  json config = compileConfig("adagrad_exponential_clipnorm");
  config["optimizer"]["config"]["global_clipnorm"] = 1.0;
  std::string k;
  try {
    parseKerasModel(kerasModel(config), "model.json");
  } catch (const std::invalid_argument& e) {
    k = e.what();
  }
  expectMentions(k, {"model.json: compile_config.optimizer (Adagrad): global_clipnorm", "only one of clipnorm"});
}

TEST(OptimizerReadingErrors, KeysOfAnotherOptimizerOrUnknown) {
  expectMentions(workloadError({{"type", "adagrad"}, {"rho", 0.9}}), {"optimizers.json", "optimizer.rho", "unknown key"});
  expectMentions(workloadError({{"type", "adadelta"}}),
                 {"optimizer.type", "'adadelta' is not one of", "adagrad", "adamax", "adamw", "nadam"});
  expectMentions(kerasError("Adagrad", "rho", 0.9), {"model.json", "compile_config.optimizer (Adagrad)", "rho", "not a key"});
  json config = compileConfig("adam_plain");
  config["optimizer"]["config"]["use_ema"] = true;
  std::string k;
  try {
    parseKerasModel(kerasModel(config), "model.json");
  } catch (const std::invalid_argument& e) {
    k = e.what();
  }
  expectMentions(k, {"compile_config.optimizer (Adam)", "use_ema", "not modelled"});
}

// Gradient accumulation takes every rule but clipping and those reading the
// step count (which counts mini-batches): they are refused by name.
TEST(OptimizerReadingErrors, AccumulationRefusesClippingAndStepCountReaders) {
  const std::pair<json, std::string> refused[] = {
      {json{{"type", "nadam"}}, "with an optimizer that reads the step count"},
      {json{{"type", "sgd"}, {"clipnorm", 1.0}}, "with gradient clipping is not modelled"},
      {json{{"type", "sgd"},
            {"learning_rate",
             {{"type", "inverse_time_decay"}, {"initial_learning_rate", 0.1}, {"decay_steps", 1}, {"decay_rate", 1}}}},
       "with an optimizer that reads the step count"}};
  for (const auto& [optimizer, why] : refused) {
    json j = job(optimizer);
    j["training"]["gradient_accumulation_count"] = 2;
    std::string message;
    try {
      compile(parseWorkload(j, "optimizers.json"));
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    expectMentions(message, {"training.gradient_accumulation_count " + why, "got '" + optimizer["type"].get<std::string>() + "'"});
  }
  json decay = job(json{{"type", "sgd"}, {"weight_decay", 0.1}, {"momentum", 0.9}});
  decay["training"]["gradient_accumulation_count"] = 2;
  EXPECT_NO_THROW(compile(parseWorkload(decay, "optimizers.json")));
}

// Found by the third adversarial pass of issue 33: the refusal came from the
// compiler, which does not know the file ("ipusim: error: optimizer: ...").
// (checkTask makes it, after `ipusim predict` or `evaluate` set the task:
// they update no weight and take any optimizer.)
TEST(OptimizerReadingErrors, TheMultiIpuRefusalNamesTheWorkloadFile) {
  json j = job(json{{"type", "adam"}});
  j["training"]["gradient_accumulation_count"] = 2;
  std::string message;
  try {
    checkTask(parseWorkload(j, "optimizers.json"), "optimizers.json");
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("optimizers.json: optimizer: training.gradient_accumulation_count with an optimizer that "
                          "reads the step count",
                          0),
            0u)
      << message;
}

// Replicas take every rule (replication.hpp: the fused updates' mean
// gradient), but clipping: a replica would clip its own gradient.
TEST(OptimizerReadingErrors, ReplicasRefuseClippingNamingTheFileAndTheReplicas) {
  json j = job(json{{"type", "adam"}, {"clipnorm", 1.0}});
  j["ipu"]["num_ipus"] = 2;
  std::string message;
  try {
    checkTask(parseWorkload(j, "optimizers.json"), "optimizers.json");
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  expectMentions(message, {"optimizers.json: optimizer: replication (ipu.num_ipus, 2 replicas) with gradient clipping",
                           "'adam'", "clipnorm"});
  j["optimizer"].erase("clipnorm");
  EXPECT_NO_THROW(checkTask(parseWorkload(j, "optimizers.json"), "optimizers.json"));
}

}  // namespace
}  // namespace ipusim::scheduler::optimizer_reading_test
