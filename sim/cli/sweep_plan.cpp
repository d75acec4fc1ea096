#include "sim/cli/sweep_plan.hpp"

#include "model/params/param_table.hpp"
#include "model/util/json_error_text.hpp"
#include "scheduler/models/workload.hpp"
#include "sim/cli/workload_overrides.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::sim {

namespace {

// The position of the next comma of `list` from `start` that separates two
// values: outside a JSON string and outside brackets and braces, so that a
// value may be a JSON list or object (training.recompute_checkpoints=
// ["a","b"],"auto" is two values, not three broken ones), npos if none.
std::size_t nextSeparator(const std::string& list, std::size_t start) {
  int depth = 0;
  bool inString = false;
  for (std::size_t i = start; i < list.size(); ++i) {
    const char c = list[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

std::vector<std::string> splitValues(const std::string& spec, const std::string& list) {
  std::vector<std::string> values;
  for (std::size_t start = 0;;) {
    const auto comma = nextSeparator(list, start);
    values.push_back(list.substr(start, comma - start));
    if (values.back().empty())
      throw std::invalid_argument("--vary " + spec + ": empty value (expected NAME=V1,V2,...)");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

bool isParameter(const std::string& name) {
  return model::params::findParam(name) != nullptr || name.rfind("host.", 0) == 0;
}

std::vector<std::string> argsFor(const SweepAxis& axis, const std::string& value) {
  if (axis.resolved == "--set") return {"--set", axis.name + "=" + value};
  if (axis.resolved.rfind("--workload-set ", 0) == 0)
    return {"--workload-set", axis.resolved.substr(std::string("--workload-set ").size()) + "=" + value};
  return {axis.resolved, value};
}

}  // namespace

// (Each name and value as the console shows it: a newline split the summary's line in two.)
std::string SweepPoint::label() const {
  if (values.size() == 1) return util::oneLineText(values[0]);
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + util::oneLineText(axisNames[i]) + "=" + util::oneLineText(values[i]);
  return text;
}

SweepAxis parseSweepAxis(const std::string& spec, const nlohmann::json& workloadJson) {
  // (Named in its errors on one line: a newline in it split the message.)
  const std::string shown = util::oneLineText(spec);
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument("--vary " + shown + ": expected NAME=V1,V2,... (e.g. steps_per_execution=1,10,100)");
  SweepAxis axis;
  axis.name = spec.substr(0, eq);
  axis.values = splitValues(spec, spec.substr(eq + 1));
  const std::string& n = axis.name;
  if (n.rfind("--", 0) == 0) {
    axis.resolved = n;
  } else if (n == "arch" || n == "tiles" || n == "ipus") {
    axis.resolved = "--" + n;
  } else if (isParameter(n)) {
    axis.resolved = "--set";
  } else if (n.find('.') != std::string::npos) {
    axis.resolved = "--workload-set " + n;
  } else {
    const auto keys = workloadKeysNamed(workloadJson, n);
    // A top-level key the file leaves at its default (task, seed) is its own
    // full path: --vary task=... was refused ("give a workload key's full
    // path") when the file had no task.
    if (keys.empty() && scheduler::kWorkloadTopLevelKeys.count(n)) {
      axis.resolved = "--workload-set " + n;
      return axis;
    }
    if (keys.empty())
      throw std::invalid_argument("--vary " + shown + ": '" + util::oneLineText(n) +
                                  "' is not a key of the workload file, a target or host parameter (ipusim params) "
                                  "or a run flag; give a workload key's full path (workloads/README.md), e.g. "
                                  "training.outfeed.mode");
    if (keys.size() > 1) {
      std::string list;
      for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument("--vary " + shown + ": '" + n + "' names several workload keys (" + list +
                                  "): give the full path");
    }
    axis.resolved = "--workload-set " + keys[0];
  }
  return axis;
}

SweepPlan planSweep(const std::string& workload, const nlohmann::json& workloadJson,
                    const std::vector<std::string>& varySpecs, const std::vector<std::string>& commonArgs) {
  if (varySpecs.empty()) throw std::invalid_argument("sweep: give at least one --vary NAME=V1,V2,...");
  SweepPlan plan;
  plan.workload = workload;
  plan.commonArgs = commonArgs;
  for (const auto& spec : varySpecs) {
    SweepAxis axis = parseSweepAxis(spec, workloadJson);
    // What the axis sets in the child: a flag, a --workload-set key or a --set parameter.
    const auto target = [](const SweepAxis& a) { return a.resolved == "--set" ? a.name : a.resolved; };
    for (const auto& earlier : plan.axes)
      if (target(earlier) == target(axis))
        throw std::invalid_argument("--vary " + spec + ": '" + axis.name + "' is varied twice (also by --vary " +
                                    earlier.name + "=...); give all its values in one --vary NAME=V1,V2,...");
    plan.axes.push_back(std::move(axis));
  }
  std::uint64_t points = 1;
  std::string product;
  for (const auto& a : plan.axes) {
    product += (product.empty() ? "" : " x ") + std::to_string(a.values.size());
    points = std::min<std::uint64_t>(points * a.values.size(), kMaxSweepPoints + 1);  // no overflow: both <= 10,001
  }
  if (points > kMaxSweepPoints)
    throw std::invalid_argument("--vary: " + product + " values make more than " + std::to_string(kMaxSweepPoints) +
                                " points, the limit of a sweep (sim/cli/sweep_plan.hpp); sweep fewer values");
  std::vector<std::string> names;
  for (const auto& a : plan.axes) names.push_back(a.name);
  std::vector<std::size_t> digit(plan.axes.size(), 0);
  for (std::size_t index = 0;; ++index) {
    SweepPoint point;
    point.index = index;
    point.axisNames = names;
    for (std::size_t a = 0; a < plan.axes.size(); ++a) {
      const std::string& value = plan.axes[a].values[digit[a]];
      point.values.push_back(value);
      if (plan.axes[a].resolved.rfind("--workload-set ", 0) == 0) {
        std::string& from = point.workloadSetsFrom;
        from += (from.empty() ? "--vary " : " and --vary ") + names[a] + "=" + util::oneLineText(value);
      }
      for (auto& arg : argsFor(plan.axes[a], value)) point.runArgs.push_back(std::move(arg));
    }
    plan.points.push_back(std::move(point));
    // The last axis changes fastest.
    std::size_t a = plan.axes.size();
    while (a > 0 && ++digit[a - 1] == plan.axes[a - 1].values.size()) digit[--a] = 0;
    if (a == 0) break;
  }
  return plan;
}

}  // namespace ipusim::sim
