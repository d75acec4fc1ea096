#pragma once
// The target flags shared by every command that simulates: --arch, --system,
// --tiles, --ipus, --set name=value (repeatable). A what-if study is one flag.
#include "model/target.hpp"
#include "sim/host/host_params.hpp"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::sim {

struct TargetFlags {
  std::string arch;                  // empty: the executable's or the workload's
  std::string system;                // a named IPU system (model/system_preset.hpp); empty: none
  std::optional<std::uint32_t> tiles;
  std::optional<std::uint32_t> ipus;
  std::vector<std::string> sets;     // "name=value"

  void addTo(CLI::App& app);
  // `base` with the flags applied on top; errors name the flag and value.
  // `--set host.*` assignments are host parameters, not target ones: skipped here.
  model::Target apply(model::Target base) const;
  // The `--set host.*` assignments applied to `base`.
  HostParams applyHost(HostParams base) const;
};

}  // namespace ipusim::sim
