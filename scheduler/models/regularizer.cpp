#include "scheduler/models/regularizer.hpp"

#include "scheduler/models/layer_spec.hpp"
#include "scheduler/models/workload.hpp"

#include <cmath>
#include <map>
#include <set>

namespace ipusim::scheduler {
namespace {

using json = nlohmann::json;

// A class's factors, defaults and keys.
struct RegularizerClass {
  double l1, l2;
  std::set<std::string> keys;
};

// Keras's classes by class_name, snake_case name and workload type.
const RegularizerClass* classOf(const std::string& name) {
  static const RegularizerClass l1{0.01, 0, {"l1", "l"}}, l2{0, 0.01, {"l2", "l"}}, l1l2{0, 0, {"l1", "l2"}};
  static const std::map<std::string, const RegularizerClass*> classes{
      {"L1", &l1}, {"l1", &l1}, {"L2", &l2}, {"l2", &l2}, {"L1L2", &l1l2}, {"l1_l2", &l1l2}};
  const auto it = classes.find(name);
  return it == classes.end() ? nullptr : it->second;
}

const char* kSupported = "supported: L1, L2, L1L2 and the names l1, l2, l1_l2";

double factor(const json& config, const std::string& key, double def, const std::function<void(const std::string&)>& fail) {
  if (!config.contains(key) || config.at(key).is_null()) return def;
  const json& v = config.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    fail(key + ": expected a non-negative number, got " + v.dump());
  return v.get<double>();
}

}  // namespace

bool readRegularizer(const json& v, RegularizerSpec& out, const std::function<void(const std::string&)>& fail) {
  if (v.is_null()) return false;
  out = RegularizerSpec{};
  out.text = v.dump().substr(0, 200);
  if (v.is_string()) {
    const std::string name = v.get<std::string>();
    // The string identifiers' defaults: 0.01 for each factor they name.
    if (name == "l1") out.l1 = 0.01;
    else if (name == "l2") out.l2 = 0.01;
    else if (name == "l1_l2") out.l1 = out.l2 = 0.01;
    else fail("'" + name + "' is not modelled (" + kSupported + ")");
    return true;
  }
  if (!v.is_object()) fail("expected a regularizer name or object, got " + out.text);
  // Keras's {"class_name", "config"}, or the workload's {"type", keys...}.
  const bool keras = v.contains("class_name");
  const std::string name = keras ? (v.at("class_name").is_string() ? v.at("class_name").get<std::string>() : "")
                                 : (v.contains("type") && v.at("type").is_string() ? v.at("type").get<std::string>() : "");
  if (!keras && !v.contains("type")) fail("missing type (expected l1, l2 or l1_l2) in " + out.text);
  const RegularizerClass* cls = classOf(name);
  if (!cls) fail(out.text + " is not modelled (" + kSupported + ")");
  static const json empty = json::object();
  const json& config = keras ? (v.contains("config") && v.at("config").is_object() ? v.at("config") : empty) : v;
  if (keras && v.contains("config") && !v.at("config").is_object() && !v.at("config").is_null())
    fail("config: expected an object, got " + v.at("config").dump());
  for (const auto& item : config.items()) {
    const std::string& key = item.key();
    if (!keras && key == "type") continue;
    if (keras && key == "name") continue;
    if (!cls->keys.count(key) || (!keras && key == "l"))
      fail(key + ": not a key of " + name + " (its keys: " + (cls->keys.count("l1") ? std::string("l1") : "") +
           (cls->keys.count("l1") && cls->keys.count("l2") ? ", " : "") + (cls->keys.count("l2") ? "l2" : "") + ")");
  }
  if (keras)
    for (const auto& item : v.items())
      if (item.key() != "class_name" && item.key() != "config" && item.key() != "module" && item.key() != "registered_name")
        fail(item.key() + ": not a key of a serialized regularizer");
  out.l1 = cls->keys.count("l1") ? factor(config, "l1", cls->l1, fail) : 0;
  out.l2 = cls->keys.count("l2") ? factor(config, "l2", cls->l2, fail) : 0;
  // TF 2.x's backward-compatible "l": L1's or L2's one factor.
  if (keras && config.contains("l") && !config.at("l").is_null()) {
    if (cls->keys.count("l1")) out.l1 = factor(config, "l", cls->l1, fail);
    else out.l2 = factor(config, "l", cls->l2, fail);
  }
  return true;
}

std::vector<std::string> regularizerKeys(const std::string& kind) {
  namespace k = layer_kind;
  if (kind == k::kDense || kind == k::kConv2D || kind == k::kConv1D || kind == k::kConv2DTranspose ||
      kind == k::kConv1DTranspose)
    return {"kernel_regularizer", "bias_regularizer", "activity_regularizer"};
  if (kind == k::kDepthwiseConv2D || kind == k::kDepthwiseConv1D)
    return {"depthwise_regularizer", "bias_regularizer", "activity_regularizer"};
  if (kind == k::kSeparableConv2D || kind == k::kSeparableConv1D)
    return {"depthwise_regularizer", "pointwise_regularizer", "bias_regularizer", "activity_regularizer"};
  if (kind == k::kBatchNormalization || kind == k::kLayerNormalization || kind == k::kGroupNormalization)
    return {"gamma_regularizer", "beta_regularizer", "activity_regularizer"};
  if (kind == k::kPRelu) return {"alpha_regularizer", "activity_regularizer"};
  if (kind == k::kEmbedding) return {"embeddings_regularizer", "activity_regularizer"};
  if (kind == k::kSimpleRnn || kind == k::kLstm || kind == k::kGru)
    return {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "activity_regularizer"};
  return {};
}

std::string regularizedWeight(const std::string& key, const std::string& kind) {
  const std::string weight = key.substr(0, key.size() - std::string("_regularizer").size());
  if (weight == "activity") return kActivityRegularizer;
  // DepthwiseConv's depthwise kernel is its "kernel"; SeparableConv's kernels are named in full.
  if (weight == "depthwise")
    return kind == layer_kind::kSeparableConv2D || kind == layer_kind::kSeparableConv1D ? "depthwise_kernel" : "kernel";
  if (weight == "pointwise") return "pointwise_kernel";
  if (weight == "recurrent") return "recurrent_kernel";  // a recurrent layer's recurrent_regularizer
  return weight;
}

bool hasRegularizers(const Workload& w) {
  for (const LayerSpec& l : w.layers)
    if (!l.regularizers.empty()) return true;
  return false;
}

}  // namespace ipusim::scheduler
