#include "sim/cli/target_flags.hpp"

#include "model/system_preset.hpp"
#include "sim/cli/commands.hpp"

#include <limits>
#include <stdexcept>

namespace ipusim::sim {

namespace {
std::vector<std::pair<std::string, std::string>> splitAssignments(const std::vector<std::string>& sets) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& assignment : sets) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("--set '" + assignment + "': expected NAME=VALUE, e.g. exchange.bytesPerCycle=8");
    out.emplace_back(assignment.substr(0, eq), assignment.substr(eq + 1));
  }
  return out;
}
}  // namespace

void TargetFlags::addTo(CLI::App& app) {
  app.add_option("--arch", arch, "target preset: ipu1 (Mk1 GC2) or ipu2 (Mk2 GC200)");
  app.add_option("--system", system,
                 "a named IPU system: " + model::systemNames() + " (IPUs, IPU-Link torus, PODs joined by GW-Links)");
  app.add_option("--tiles", tiles, "tiles per IPU (override)")
      ->check(wholeNumberAtLeastOne(std::numeric_limits<std::uint32_t>::max()));
  app.add_option("--ipus", ipus, "number of IPUs (override of ipuLink.numIpus)")
      ->check(wholeNumberAtLeastOne(std::numeric_limits<std::uint32_t>::max()));
  app.add_option("--set", sets, "override any target parameter: --set exchange.bytesPerCycle=8 (see `ipusim params`)")
      ->type_name("NAME=VALUE");
}

model::Target TargetFlags::apply(model::Target base) const {
  model::Target target = arch.empty() ? std::move(base) : model::Target::preset(arch);
  if (!system.empty()) model::applySystem(target, system);
  if (tiles) target.set("tile.tilesPerIpu", std::to_string(*tiles));
  if (ipus) target.set("ipuLink.numIpus", std::to_string(*ipus));
  for (const auto& [name, value] : splitAssignments(sets))
    if (!HostParams::isHostParam(name)) target.set(name, value);
  target.validate();
  return target;
}

HostParams TargetFlags::applyHost(HostParams base) const {
  for (const auto& [name, value] : splitAssignments(sets))
    if (HostParams::isHostParam(name)) base.set(name, value);
  return base;
}

}  // namespace ipusim::sim
