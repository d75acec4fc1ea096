#pragma once
// Runs the Copy and Execute programs of a small executable in order, outside
// SystemC, with the machine model's own plans (LoadedExecutable): the
// exchange fabric's phase cycles and the compute sets' cycles plus their
// sync — the same figures the simulator waits for. Functional when asked.
#include "model/hardware/exchange_fabric.hpp"
#include "model/hardware/loaded_executable.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::testing {

inline ir::Cycles runStatically(model::hardware::LoadedExecutable& loaded, const std::vector<ir::Id>& programs) {
  ir::Cycles total = 0;
  for (ir::Id id : programs) {
    const ir::Program& p = loaded.exe.programs[id];
    if (p.kind == ir::ProgramKind::Copy) {
      const auto& plan = loaded.copies[loaded.copyIndexOfProgram[id]];
      if (loaded.functional) model::hardware::ExchangeFabric::execute(plan);
      total += plan.cycles;
    } else if (p.kind == ir::ProgramKind::Execute) {
      const auto& cs = loaded.computeSets[p.computeSet];
      if (loaded.functional) cs.run();
      total += *std::max_element(cs.ipuCycles().begin(), cs.ipuCycles().end()) + loaded.target.sync.internalCycles;
    } else {
      throw std::logic_error("runStatically: only Copy and Execute programs");
    }
  }
  return total;
}

}  // namespace ipusim::testing
