#include "scheduler/models/metric_spec.hpp"

#include <algorithm>
#include <map>

namespace ipusim::scheduler {
namespace {

// A metric's name as Keras resolves a string or a serialized object's class.
std::string canonical(const std::string& name) {
  static const std::map<std::string, std::string> names{
      {"accuracy", "accuracy"},
      {"acc", "accuracy"},
      {"Accuracy", "accuracy"},
      {"categorical_accuracy", "categorical_accuracy"},
      {"CategoricalAccuracy", "categorical_accuracy"},
      {"sparse_categorical_accuracy", "sparse_categorical_accuracy"},
      {"SparseCategoricalAccuracy", "sparse_categorical_accuracy"},
      {"binary_accuracy", "binary_accuracy"},
      {"BinaryAccuracy", "binary_accuracy"},
      {"mae", "mean_absolute_error"},
      {"mean_absolute_error", "mean_absolute_error"},
      {"MeanAbsoluteError", "mean_absolute_error"},
      {"mse", "mean_squared_error"},
      {"mean_squared_error", "mean_squared_error"},
      {"MeanSquaredError", "mean_squared_error"}};
  const auto it = names.find(name);
  return it == names.end() ? "" : it->second;
}

// The accuracy a loss outfeeds (training_graph.cpp addAccuracy), by Keras's name.
std::string accuracyOf(const LossSpec& loss) {
  if (loss.type == "sparse_categorical_crossentropy") return "sparse_categorical_accuracy";
  if (loss.type == "categorical_crossentropy") return "categorical_accuracy";
  if (loss.type == "binary_crossentropy") return "binary_accuracy";
  return "";
}

}  // namespace

void readMetrics(const nlohmann::json& list, LossSpec& loss, const std::function<void(const std::string&)>& fail) {
  loss.metrics.clear();
  loss.unmodelledMetrics.clear();
  if (list.is_null()) return;
  if (!list.is_array()) fail("expected a list of metrics, got " + list.dump());
  // One output's metrics, nested as Keras nests them per output.
  const nlohmann::json& metrics = list.size() == 1 && list[0].is_array() ? list[0] : list;
  std::vector<std::string>& added = loss.metrics;
  for (const nlohmann::json& m : metrics) {
    std::string name;
    if (m.is_string()) name = m.get<std::string>();
    else if (m.is_object() && m.contains("class_name") && m.at("class_name").is_string()) name = m.at("class_name").get<std::string>();
    else fail("expected a metric's name or a serialized metric, got " + m.dump());
    // TF 2.x serialized a metric function as a MeanMetricWrapper naming it ("fn": "sparse_categorical_accuracy").
    if (name == "MeanMetricWrapper" && m.contains("config") && m.at("config").is_object() &&
        m.at("config").contains("fn") && m.at("config").at("fn").is_string())
      name = m.at("config").at("fn").get<std::string>();
    const std::string metric = canonical(name);
    if (metric.empty()) {
      loss.unmodelledMetrics.push_back(name);
      continue;
    }
    if (metric == "mean_absolute_error" || metric == "mean_squared_error") {
      if (loss.classIndexLabels())
        fail("'" + name + "' reads the targets as values, but " + loss.type + "'s labels are class indices (not modelled)");
      if (std::find(added.begin(), added.end(), metric) == added.end()) added.push_back(metric);
      continue;
    }
    const std::string accuracy = accuracyOf(loss);
    if (accuracy.empty())
      fail("'" + name + "' is an accuracy, which " + loss.type + " outfeeds none of (the classification losses do)");
    if (metric != "accuracy" && metric != accuracy)
      fail("'" + name + "' does not fit " + loss.type + ", whose accuracy is " + accuracy + " (outfed as 'accuracy')");
  }
}

}  // namespace ipusim::scheduler
