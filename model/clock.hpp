#pragma once
// The SystemC kernel counts device cycles: by convention one cycle is one
// nanosecond of SystemC time (time resolution 1 ns). Seconds exist only at
// the edges, through Target::clockHz.
#include "model/ir/types.hpp"

#include <systemc>

namespace ipusim::model {

// Ticks of the kernel's time resolution per cycle (1 when the resolution is 1 ns).
ir::Cycles kTicksPerCycle();
// Sets the kernel time resolution; call once before any sc_time is made.
void configureKernelTime();

inline sc_core::sc_time cyclesToTime(ir::Cycles cycles) {
  return sc_core::sc_time::from_value(cycles * kTicksPerCycle());
}
inline ir::Cycles nowCycles() {
  return sc_core::sc_time_stamp().value() / kTicksPerCycle();
}

}  // namespace ipusim::model
