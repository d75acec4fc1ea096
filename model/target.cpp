// Target: presets, overrides, validation and JSON, all generated from the
// parameter table in model/params/param_table.cpp.
#include "model/target.hpp"

#include "model/params/param_table.hpp"
#include "model/target_limits.hpp"
#include "model/util/nearest_name.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ipusim::model {
namespace {

const std::vector<std::string> kArchs = {"ipu1", "ipu2"};

void assign(const params::ParamDescriptor& param, Target& target, double value) {
  std::visit([value](auto* field) { *field = static_cast<std::remove_pointer_t<decltype(field)>>(value); },
             param.field(target));
}

std::string jsonTypeName(const nlohmann::json& j) { return j.type_name(); }

}  // namespace

Target Target::preset(const std::string& arch) {
  if (arch != "ipu1" && arch != "ipu2")
    throw std::invalid_argument("unknown target arch '" + arch + "' (valid: ipu1, ipu2)");
  Target target;
  target.arch = arch;
  for (const auto& param : params::paramTable()) assign(param, target, arch == "ipu1" ? param.ipu1 : param.ipu2);
  target.validate();
  return target;
}

void Target::set(const std::string& name, const std::string& value) {
  const params::ParamDescriptor* param = params::findParam(name);
  if (!param)
    throw std::invalid_argument("unknown target parameter '" + name + "' (nearest valid name: '" +
                                util::nearestName(name, params::paramNames()) + "'; `ipusim params` lists them)");
  params::parseAndSet(*param, *this, value);
}

void Target::validate() const {
  bool knownArch = false;
  for (const auto& a : kArchs) knownArch = knownArch || a == arch;
  if (!knownArch) throw std::invalid_argument("target arch '" + arch + "' is not one of: ipu1, ipu2");
  for (const auto& param : params::paramTable()) params::checkBound(param, *this);
  checkTargetLimits(*this);
  // Global tile indices are 32-bit.
  if (std::uint64_t(tile.tilesPerIpu) * ipuLink.numIpus > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("target: tile.tilesPerIpu x ipuLink.numIpus = " +
                                std::to_string(std::uint64_t(tile.tilesPerIpu) * ipuLink.numIpus) +
                                " exceeds the 32-bit global tile index");
}

std::uint64_t Target::secondsToCycles(double seconds, const std::string& what) const {
  return durationToCycles(seconds, clockHz, what);
}

nlohmann::json Target::toJson() const {
  const Target base = preset(arch);
  nlohmann::json overrides = nlohmann::json::object();
  for (const auto& param : params::paramTable()) {
    nlohmann::json value = params::jsonValue(param, *this);
    if (value != params::jsonValue(param, base)) overrides[param.name] = std::move(value);
  }
  return {{"arch", arch}, {"overrides", overrides}};
}

Target Target::fromJson(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("target: expected a JSON object, got " + jsonTypeName(j));
  for (const auto& item : j.items())
    if (item.key() != "arch" && item.key() != "overrides")
      throw std::invalid_argument("target: unknown key '" + item.key() + "' (expected 'arch' and 'overrides')");
  if (!j.contains("arch") || !j["arch"].is_string())
    throw std::invalid_argument("target.arch: expected a string (ipu1 or ipu2)");
  Target target = preset(j["arch"].get<std::string>());
  if (j.contains("overrides")) {
    const auto& overrides = j["overrides"];
    if (!overrides.is_object())
      throw std::invalid_argument("target.overrides: expected an object {name: value}, got " + jsonTypeName(overrides));
    for (const auto& item : overrides.items()) {
      const auto& v = item.value();
      if (v.is_string()) target.set(item.key(), v.get<std::string>());
      else if (v.is_number()) target.set(item.key(), v.dump());
      else
        throw std::invalid_argument("target.overrides." + item.key() + ": expected a number or a string, got " +
                                    jsonTypeName(v));
    }
  }
  target.validate();
  return target;
}

std::vector<ParamInfo> listParams(const Target& target) {
  std::vector<ParamInfo> rows;
  for (const auto& param : params::paramTable())
    rows.push_back({param.component, param.name, param.unit, param.description, params::formatValue(param, target)});
  return rows;
}

}  // namespace ipusim::model
