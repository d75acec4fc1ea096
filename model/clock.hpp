#pragma once
// The SystemC kernel counts device cycles: by convention one cycle is one
// nanosecond of SystemC time (time resolution 1 ns). Seconds exist only at
// the edges, through Target::clockHz.
#include "model/ir/types.hpp"
#include "model/target_limits.hpp"

#include <systemc>

namespace ipusim::model {

// Ticks of the kernel's time resolution per cycle (1 when the resolution is 1 ns).
ir::Cycles kTicksPerCycle();
// Sets the kernel time resolution; call once before any sc_time is made.
void configureKernelTime();

inline ir::Cycles nowCycles() {
  return sc_core::sc_time_stamp().value() / kTicksPerCycle();
}

// The simulated clock stops at 2^63 cycles (~220 years at 1.33 GHz), well
// inside SystemC's 64-bit time at one tick per cycle.
inline constexpr ir::Cycles kMaxSimulatedCycles = 1ull << 63;
// A wait of `cycles` from now. Throws std::overflow_error when the duration is
// over kMaxDurationCycles (model/target_limits.hpp) or would take the clock
// past kMaxSimulatedCycles: SystemC's time would otherwise wrap silently.
sc_core::sc_time cyclesToTimeChecked(ir::Cycles cycles);
inline sc_core::sc_time cyclesToTime(ir::Cycles cycles) {
  if (cycles > kMaxDurationCycles || nowCycles() > kMaxSimulatedCycles - cycles) return cyclesToTimeChecked(cycles);
  return sc_core::sc_time::from_value(cycles * kTicksPerCycle());
}

}  // namespace ipusim::model
