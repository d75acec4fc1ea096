#include "sim/cli/commands.hpp"
#include "sim/cli/target_flags.hpp"
#include "sim/options/engine_options.hpp"

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
    std::string component;
    for (const auto& p : model::listParams(target)) {
      if (p.component != component) {
        component = p.component;
        std::cout << "\n[" << component << "]\n";
      }
      std::cout << "  " << std::left << std::setw(34) << p.name << std::setw(16) << p.value << std::setw(8) << p.unit
                << p.description << "\n";
    }
    std::cout << "\n[host]\n";
    for (const auto& p : listHostParams(flags->applyHost(HostParams::defaults())))
      std::cout << "  " << std::left << std::setw(34) << p.name << std::setw(16) << p.value << std::setw(8) << p.unit
                << p.description << "\n";
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
