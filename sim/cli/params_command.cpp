#include "sim/cli/commands.hpp"
#include "sim/cli/target_flags.hpp"
#include "sim/options/engine_options.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace ipusim::sim {

void addParamsCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("params", "List every target parameter with its value, unit and description");
  auto flags = std::make_shared<TargetFlags>();
  flags->arch = "ipu2";
  flags->addTo(*cmd);
  cmd->callback([flags, &exitCode] {
    const model::Target target = flags->apply(model::Target::preset(flags->arch));
    struct Row { std::string group, name, value, unit, description; };
    std::vector<Row> rows;
    for (const auto& p : model::listParams(target)) rows.push_back({p.component, p.name, p.value, p.unit, p.description});
    for (const auto& p : listHostParams(flags->applyHost(HostParams::defaults())))
      rows.push_back({"host", p.name, p.value, p.unit, p.description});
    std::size_t name = 0, value = 0, unit = 0;
    for (const auto& r : rows) {
      name = std::max(name, r.name.size());
      value = std::max(value, r.value.size());
      unit = std::max(unit, r.unit.size());
    }
    std::string group;
    for (const auto& r : rows) {
      if (r.group != group) std::cout << (group.empty() ? "" : "\n") << "[" << (group = r.group) << "]\n";
      std::cout << "  " << std::left << std::setw(int(name + 2)) << r.name << std::setw(int(value + 2)) << r.value
                << std::setw(int(unit + 2)) << r.unit << r.description << "\n";
    }
    exitCode = 0;
  });
}

void addOptionsCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("options", "List the supported engine options (POPLAR_ENGINE_OPTIONS, --engine-options)");
  cmd->callback([&exitCode] {
    for (const auto& o : engineOptionTable())
      std::cout << std::left << std::setw(46) << o.name << std::setw(24) << o.accepts << "default " << std::setw(7)
                << o.defaultValue << o.description << "\n";
    exitCode = 0;
  });
}

}  // namespace ipusim::sim
