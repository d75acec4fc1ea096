#include "scheduler/models/keras_config.hpp"

#include "scheduler/models/dtype_policy.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::scheduler {

std::string kerasClassName(const nlohmann::json& object) {
  if (object.is_object() && object.contains("class_name") && object.at("class_name").is_string())
    return object.at("class_name").get<std::string>();
  return "";
}

KerasConfig::KerasConfig(const nlohmann::json& config, std::string file, std::string where)
    : config_(config), file_(std::move(file)), where_(std::move(where)) {
  if (!config_.is_object()) fail("config", "expected an object, got " + config_.dump());
}

bool KerasConfig::has(const std::string& key) const { return config_.contains(key) && !config_.at(key).is_null(); }

bool KerasConfig::isNull(const std::string& key) const { return config_.contains(key) && config_.at(key).is_null(); }

void KerasConfig::require(const std::string& key, const std::string& expected) const {
  if (isNull(key)) refuseNull(key, expected);
  if (!has(key)) fail(key, "missing (expected " + expected + ")");
}

void KerasConfig::refuseNull(const std::string& key, const std::string& expected) const {
  fail(key, "null is refused: Keras computes with this value and fails on None (expected " + expected + ")");
}

const nlohmann::json& KerasConfig::at(const std::string& key) const {
  static const nlohmann::json null;
  return config_.contains(key) ? config_.at(key) : null;
}

void KerasConfig::ignore(std::initializer_list<const char*> keys) {
  for (const char* k : keys) use(k);
}

void KerasConfig::check() const {
  for (auto it = config_.begin(); it != config_.end(); ++it)
    if (!used_.count(it.key()))
      fail(it.key(), it.value().dump() + " is not a key ipusim's importer knows; it may change the computation");
}

void KerasConfig::fail(const std::string& key, const std::string& what) const {
  const auto renamed = fileKeys_.find(key);
  throw std::invalid_argument(file_ + ": " + where_ + ": " + (renamed == fileKeys_.end() ? key : renamed->second) + ": " + what);
}

std::string KerasConfig::string(const std::string& key, const std::string& def) {
  use(key);
  if (isNull(key)) refuseNull(key, "a string");
  if (!has(key)) return def;
  if (!at(key).is_string()) fail(key, "expected a string, got " + at(key).dump());
  return at(key).get<std::string>();
}

std::string KerasConfig::oneOf(const std::string& key, const std::string& def, const std::set<std::string>& allowed) {
  const std::string v = string(key, def);
  if (!allowed.count(v)) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : " | ") + a;
    fail(key, "'" + v + "' is not modelled (supported: " + list + ")");
  }
  return v;
}

double KerasConfig::number(const std::string& key, double def) {
  use(key);
  if (isNull(key)) refuseNull(key, "a number");
  if (!has(key)) return def;
  if (!at(key).is_number())
    fail(key, "expected a number, got " + at(key).dump() +
                  (at(key).is_object() ? " (schedules and other objects are not modelled)" : ""));
  return at(key).get<double>();
}

std::int64_t KerasConfig::integer(const std::string& key, std::int64_t def) {
  use(key);
  if (isNull(key)) refuseNull(key, "an integer");
  if (!has(key)) return def;
  // (An integer above 2^63 - 1 would wrap to a negative one.)
  if (!at(key).is_number_integer() || (at(key).is_number_unsigned() && at(key).get<std::uint64_t>() > 0x7fffffffffffffffull))
    fail(key, "expected an integer, got " + at(key).dump());
  return at(key).get<std::int64_t>();
}

bool KerasConfig::boolean(const std::string& key, bool def) {
  use(key);
  // Keras tests these for truth (`if self.use_bias:`, `if self.center:`): None is false.
  if (isNull(key)) return false;
  if (!has(key)) return def;
  if (!at(key).is_boolean()) fail(key, "expected true or false, got " + at(key).dump());
  return at(key).get<bool>();
}

std::array<std::uint32_t, 2> KerasConfig::pair(const std::string& key, std::array<std::uint32_t, 2> def) {
  use(key);
  if (isNull(key)) refuseNull(key, "a positive integer or a pair of them [rows, columns]");
  if (!has(key)) return def;
  const json& v = at(key);
  auto positive = [](const json& e) {
    return e.is_number_integer() && e.get<std::int64_t>() > 0 && e.get<std::int64_t>() <= 0xffffffffll;
  };
  if (positive(v)) return {v.get<std::uint32_t>(), v.get<std::uint32_t>()};
  if (v.is_array() && v.size() == 2 && positive(v[0]) && positive(v[1]))
    return {v[0].get<std::uint32_t>(), v[1].get<std::uint32_t>()};
  fail(key, "expected a positive integer or a pair of them [rows, columns], got " + v.dump());
}

std::uint32_t KerasConfig::count32(const std::string& key) {
  require(key, "a positive integer");
  const json& v = at(key);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > 0xffffffffull)
    fail(key, v.dump() + " is over the limit of 4294967295 (a 32-bit count)");
  if (!v.is_number_integer() || v.get<std::int64_t>() <= 0) fail(key, "expected a positive integer, got " + v.dump());
  use(key);
  return std::uint32_t(v.get<std::int64_t>());
}

std::uint32_t KerasConfig::single(const std::string& key, std::uint32_t def) {
  use(key);
  if (isNull(key)) refuseNull(key, "a positive integer (or a list of one)");
  if (!has(key)) return def;
  const json& v = at(key);
  const json& e = v.is_array() && v.size() == 1 ? v[0] : v;
  if (e.is_number_integer() && e.get<std::int64_t>() > 0 && e.get<std::int64_t>() <= 0xffffffffll) return e.get<std::uint32_t>();
  fail(key, "expected a positive integer (or a list of one), got " + v.dump());
}

void KerasConfig::requireNull(const std::string& key, const std::string& why) {
  use(key);
  if (has(key)) fail(key, at(key).dump() + " is not modelled (" + why + "); only null is");
}

void KerasConfig::requireValue(const std::string& key, const json& modelled, const std::string& why) {
  use(key);
  if (!has(key)) return;
  const json& v = at(key);
  // [1, 1] and 1 mean the same to Keras for sizes given per dimension.
  bool same = v == modelled;
  if (!same && v.is_array() && modelled.is_number())
    same = !v.empty() && std::all_of(v.begin(), v.end(), [&](const json& e) { return e == modelled; });
  if (!same) fail(key, v.dump() + " is not modelled (" + why + "); only " + modelled.dump() + " is");
}

void KerasConfig::requireInitializer(const std::string& key, const std::set<std::string>& classes) {
  use(key);
  if (!config_.contains(key)) return;
  // None: add_weight's default for a float weight, GlorotUniform (Keras 3's
  // Layer.add_weight, TF 2.x's base_layer), whatever the layer's own default.
  static const json kGlorot = "GlorotUniform";
  const json& v = isNull(key) ? kGlorot : at(key);
  InitializerSpec spec = readInitializer(v, [&](const std::string& what) { fail(key, what); });
  const auto renamed = fileKeys_.find(key);  // a Keras 1 file's "init"
  spec.key = renamed == fileKeys_.end() ? key : renamed->second;
  // The layer's default (Keras's: GlorotUniform, Zeros, Ones) is the draw the
  // layer makes by itself; any other is the layer's to use (initializers()).
  for (const std::string& cls : classes) {
    const InitializerSpec def = readInitializer(json(cls), [&](const std::string& what) { fail(key, what); });
    if (spec == def) return;
  }
  if (key.rfind("moving_", 0) == 0)
    fail(key, at(key).dump().substr(0, 200) + (isNull(key) ? " (Keras draws it GlorotUniform)" : "") +
                  " is not modelled (moving statistics start as Keras's defaults: zeros and ones)");
  initializers_[key] = spec;
}

void KerasConfig::regularizer(const std::string& key) {
  use(key);
  if (!has(key)) return;
  RegularizerSpec spec;
  if (readRegularizer(at(key), spec, [&](const std::string& what) { fail(key, what); })) regularizers_[key] = spec;
}

std::string KerasConfig::activation(const std::string& key) {
  use(key);
  if (!has(key)) return "linear";
  const json& v = at(key);
  if (v.is_string()) return v.get<std::string>();
  // Keras 3 may serialize a built-in function as {"class_name": "function", "config": "relu", ...}.
  if (kerasClassName(v) == "function" && v.contains("config") && v.at("config").is_string())
    return v.at("config").get<std::string>();
  fail(key, v.dump() + " is not an activation ipusim knows");
}

std::string KerasConfig::dtypePolicy(const std::string& key) {
  use(key);
  if (!has(key)) return "float32";
  const json& v = at(key);
  std::string name;
  if (v.is_string()) {
    name = v.get<std::string>();
  } else {
    // TF 2.x: {"class_name": "Policy", "config": {"name": ...}}; Keras 3:
    // {"module": "keras", "class_name": "DTypePolicy" (3.0-3.3: "FloatDTypePolicy"), "config": {"name": ...}}.
    static const std::set<std::string> policies{"Policy", "DTypePolicy", "FloatDTypePolicy"};
    if (!policies.count(kerasClassName(v)) || !v.contains("config") || !v.at("config").is_object() ||
        !v.at("config").contains("name") || !v.at("config").at("name").is_string())
      fail(key, v.dump() + " is not a dtype policy ipusim knows (Policy, DTypePolicy)");
    name = v.at("config").at("name").get<std::string>();
  }
  if (!isModelledDtypePolicy(name)) fail(key, dtypePolicyRefusal(name));
  return name;
}

std::vector<std::uint64_t> KerasConfig::batchShape(const std::string& key, std::uint32_t& batch) {
  use(key);
  const json& v = at(key);
  if (!v.is_array() || v.size() < 2) fail(key, "expected [batch, d1, ...], got " + v.dump());
  batch = 0;
  if (!v[0].is_null()) {
    if (!v[0].is_number_integer() || v[0].get<std::int64_t>() <= 0 || v[0].get<std::int64_t>() > 0xffffffffll)
      fail(key, "the batch dimension " + v[0].dump() + " is not null or a positive integer");
    batch = v[0].get<std::uint32_t>();
  }
  std::vector<std::uint64_t> shape;
  for (std::size_t d = 1; d < v.size(); ++d) {
    if (v[d].is_null()) {  // left unknown (an image size): the workload's dataset.input_shape gives it
      shape.push_back(0);
      continue;
    }
    if (!v[d].is_number_integer() || v[d].get<std::int64_t>() <= 0)
      fail(key, "dimension " + std::to_string(d) + " is " + v[d].dump() + "; expected a positive size or null");
    shape.push_back(v[d].get<std::uint64_t>());
  }
  return shape;
}

}  // namespace ipusim::scheduler
