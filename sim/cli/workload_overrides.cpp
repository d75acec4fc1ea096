#include "sim/cli/workload_overrides.hpp"

#include "model/util/json_nesting.hpp"
#include "model/util/json_unique_keys.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <stdexcept>

namespace ipusim::sim {

std::pair<std::vector<std::string>, nlohmann::json> parseWorkloadAssignment(const std::string& assignment) {
  // A workload file's strings are UTF-8 (its JSON reader refuses other
  // bytes); so are an assignment's: a layer name of Latin-1 bytes reached
  // the profile's names, and `run --json` failed with the JSON library's
  // "invalid UTF-8 byte".
  try {
    (void)nlohmann::json(assignment).dump();
  } catch (const nlohmann::json::type_error&) {
    const std::string shown = nlohmann::json(assignment).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    throw std::invalid_argument("workload assignment '" + shown.substr(1, shown.size() - 2) +
                                "': not UTF-8 text (U+FFFD shows each byte that is not); expected UTF-8, as in a "
                                "workload file");
  }
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument("workload assignment '" + assignment + "': expected key.path=value");
  std::vector<std::string> path;
  const std::string key = assignment.substr(0, eq);
  for (std::size_t start = 0;;) {
    const auto dot = key.find('.', start);
    path.push_back(key.substr(start, dot - start));
    if (path.back().empty())
      throw std::invalid_argument("workload assignment '" + assignment + "': empty part in key '" + key + "'");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  const std::string text = assignment.substr(eq + 1);
  util::checkJsonNesting(text, "workload assignment '" + key + "'");
  // A JSON value (a key given twice refused), else the text as a string.
  nlohmann::json value = util::parseJsonWithUniqueKeys(text, "workload assignment '" + key + "'", false);
  if (value.is_discarded()) value = text;
  return {path, value};
}

nlohmann::json inputShapeJson(const std::string& text) {
  nlohmann::json shape = nlohmann::json::array();
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || part[0] == '-' || v == 0 || v > 0xffffffffull)
      throw std::invalid_argument("--input-shape '" + text + "': '" + part +
                                  "' is not a positive size (expected sizes separated by commas, e.g. 224,224,3)");
    shape.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return shape;
}

namespace {

// One part of a key path: a key, then the list indices it is followed by
// ("layers[0]" -> "layers", {0}). Throws naming the assignment when the
// brackets are not whole non-negative indices.
std::pair<std::string, std::vector<std::size_t>> keyAndIndices(const std::string& part, const std::string& assignment) {
  const std::size_t open = part.find('[');
  std::pair<std::string, std::vector<std::size_t>> out{part.substr(0, open), {}};
  for (std::size_t at = open; at != std::string::npos && at < part.size();) {
    const std::size_t close = part.find(']', at);
    const std::string digits = close == std::string::npos ? "" : part.substr(at + 1, close - at - 1);
    // (Up to 18 digits: a larger index than any list has is said so by the
    // list, not refused as if it were not a number.)
    if (part[at] != '[' || digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("workload assignment '" + assignment + "': '" + part +
                                  "': expected a key, then list indices in brackets (model.layers[0].units)");
    out.second.push_back(std::size_t(std::stoull(digits)));
    at = close + 1;
  }
  if (out.first.empty())
    throw std::invalid_argument("workload assignment '" + assignment + "': '" + part +
                                "' names no key before its index");
  return out;
}

}  // namespace

void applyWorkloadAssignment(nlohmann::json& workload, const std::string& assignment) {
  auto [path, value] = parseWorkloadAssignment(assignment);
  nlohmann::json* at = &workload;
  std::string walked;  // the path reached so far, as the errors name it
  for (std::size_t i = 0; i < path.size(); ++i) {
    const auto [key, indices] = keyAndIndices(path[i], assignment);
    if (!at->is_object())
      throw std::invalid_argument("workload assignment '" + assignment + "': " +
                                  (walked.empty() ? std::string("the workload") : "'" + walked + "'") +
                                  " is not an object");
    walked += (walked.empty() ? "" : ".") + key;
    at = &(*at)[key];
    // An index reaches an entry of an existing list (a layer of model.layers);
    // a list is never made or grown by an assignment.
    for (std::size_t k : indices) {
      // (An absent list was "not a list": model.layers of a workload whose
      // model is a Keras file, dataset.input_shape of one that gives none.)
      if (at->is_null())
        throw std::invalid_argument("workload assignment '" + assignment + "': '" + walked +
                                    "' is not in the workload: an index reaches an entry of a list the workload "
                                    "gives" + (walked == "model.layers" && workload.contains("model") &&
                                                       workload["model"].is_object() &&
                                                       workload["model"].contains("keras")
                                                   ? " (this model's layers are its Keras file's)"
                                                   : ""));
      if (!at->is_array())
        throw std::invalid_argument("workload assignment '" + assignment + "': '" + walked + "' is not a list");
      if (k >= at->size())
        throw std::invalid_argument("workload assignment '" + assignment + "': '" + walked + "' has " +
                                    std::to_string(at->size()) + (at->size() == 1 ? " entry" : " entries") +
                                    ": index " + std::to_string(k) + " is beyond them");
      walked += "[" + std::to_string(k) + "]";
      at = &(*at)[k];
    }
    if (indices.empty() && at->is_null() && i + 1 < path.size()) *at = nlohmann::json::object();  // made as needed
  }
  *at = std::move(value);
}

namespace {

// The assignments applied, an error naming the file and the flags they came
// from (`from`: a sweep's "--vary NAME=V" says "workload assignment" alone).
void applyAssignments(nlohmann::json& j, const std::vector<std::string>& assignments, const std::string& where) {
  for (const auto& a : assignments) {
    try {
      applyWorkloadAssignment(j, a);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + ": " + e.what());
    }
  }
}

}  // namespace

scheduler::Workload loadWorkloadWith(const std::string& path, const std::vector<std::string>& assignments,
                                     const std::string& from) {
  if (assignments.empty()) return scheduler::loadWorkload(path);
  nlohmann::json j = scheduler::readWorkloadJson(path);
  const std::string source = path + " with " + from;
  applyAssignments(j, assignments, source);
  return scheduler::parseWorkloadFile(j, path, source);
}

scheduler::Workload kerasWorkload(const std::string& kerasPath, const std::vector<std::string>& assignments,
                                  const std::string& from) {
  const scheduler::KerasModel model = scheduler::loadKerasModel(kerasPath);
  std::string stem = kerasPath.substr(kerasPath.find_last_of('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  nlohmann::json j = {{"name", stem}, {"model", {{"keras", kerasPath}}}};
  // Fashion-MNIST when the model reads 784 elements an example (28x28 or
  // 28x28x1) and classifies into 10; generated data otherwise.
  const auto& out = model.layers.back().outputShape;
  if (scheduler::elementsOf(model.inputShape) != 784 || out.size() != 1 || out[0] != 10)
    j["dataset"] = {{"format", "synthetic"}};
  applyAssignments(j, assignments, from + " on the workload made for " + kerasPath);
  // Errors name where the value came from: the defaults for the Keras file, or the flags (`from`).
  return scheduler::parseWorkload(j, assignments.empty() ? "the workload made for " + kerasPath
                                                         : from + " on the workload made for " + kerasPath);
}

namespace {

void collectKeys(const nlohmann::json& j, const std::string& prefix, const std::string& leaf,
                 std::vector<std::string>& out) {
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (key == leaf) out.push_back(path);
    collectKeys(value, path, leaf, out);
  }
}

}  // namespace

std::vector<std::string> workloadKeysNamed(const nlohmann::json& workload, const std::string& leaf) {
  std::vector<std::string> keys;
  collectKeys(workload, "", leaf, keys);
  return keys;
}

}  // namespace ipusim::sim
