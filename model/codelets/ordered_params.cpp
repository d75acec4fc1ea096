#include "model/codelets/codelet.hpp"
#include "model/util/nearest_name.hpp"

#include <stdexcept>

namespace ipusim::model {

std::vector<double> orderedParams(const Codelet& codelet, const ir::VertexParams& params) {
  const std::vector<std::string> names = codelet.params();
  for (const auto& [name, value] : params) {
    bool known = false;
    for (const auto& n : names) known = known || n == name;
    if (!known) {
      std::string message = "codelet " + codelet.name() + ": unknown param '" + name + "'";
      if (names.empty())
        message += " (it takes no params)";
      else
        message += "; did you mean '" + util::nearestName(name, names) + "'?";
      throw std::invalid_argument(message);
    }
  }
  const std::vector<ParamDefault> defaults = codelet.paramDefaults();
  std::vector<double> ordered;
  ordered.reserve(names.size());
  for (const auto& name : names) {
    if (auto it = params.find(name); it != params.end()) {
      ordered.push_back(it->second);
      continue;
    }
    bool found = false;
    for (const auto& d : defaults)
      if (d.name == name) {
        ordered.push_back(d.value);
        found = true;
        break;
      }
    if (!found) throw std::invalid_argument("codelet " + codelet.name() + ": missing param '" + name + "'");
  }
  return ordered;
}

}  // namespace ipusim::model
