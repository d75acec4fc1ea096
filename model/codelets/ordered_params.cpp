#include "model/codelets/codelet.hpp"
#include "model/util/nearest_name.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::model {

const Codelet::ParamLayout& Codelet::paramLayout() const {
  std::call_once(paramLayoutOnce_, [this] {
    const std::vector<ParamDefault> defaults = paramDefaults();
    for (const std::string& name : params()) {
      paramLayout_.names.emplace_back(name);
      const auto d = std::find_if(defaults.begin(), defaults.end(), [&](const ParamDefault& p) { return p.name == name; });
      paramLayout_.defaults.push_back(d == defaults.end() ? std::nullopt : std::optional<double>(d->value));
    }
  });
  return paramLayout_;
}

std::vector<double> orderedParams(const Codelet& codelet, const ir::VertexParams& params) {
  const Codelet::ParamLayout& layout = codelet.paramLayout();
  for (const auto& [name, value] : params) {
    if (std::find(layout.names.begin(), layout.names.end(), name) != layout.names.end()) continue;
    const std::vector<std::string> names = codelet.params();
    std::string message = "codelet " + codelet.name() + ": unknown param '" + name + "'";
    if (names.empty())
      message += " (it takes no params)";
    else
      message += "; did you mean '" + util::nearestName(name, names) + "'?";
    throw std::invalid_argument(message);
  }
  std::vector<double> ordered;
  ordered.reserve(layout.names.size());
  for (std::size_t i = 0; i < layout.names.size(); ++i) {
    if (auto it = params.find(layout.names[i]); it != params.end()) {
      ordered.push_back(it->second);
    } else if (layout.defaults[i]) {
      ordered.push_back(*layout.defaults[i]);
    } else {
      throw std::invalid_argument("codelet " + codelet.name() + ": missing param '" + layout.names[i].str() + "'");
    }
  }
  return ordered;
}

}  // namespace ipusim::model
