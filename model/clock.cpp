#include "model/clock.hpp"

#include <stdexcept>
#include <string>

namespace ipusim::model {
namespace {

// Ticks of the resolution in one nanosecond (one cycle); 0 if coarser than 1 ns.
ir::Cycles ticksPerNanosecond() { return sc_core::sc_time(1, sc_core::SC_NS).value(); }

}  // namespace

void configureKernelTime() {
  static bool configured = false;
  if (configured) return;  // SystemC refuses a second sc_set_time_resolution
  try {
    sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
  } catch (const sc_core::sc_report&) {
    // The resolution was fixed earlier (another call site set it, or an
    // sc_time was already made). Any resolution that divides 1 ns still
    // counts whole cycles, so only a coarser one is an error.
    if (ticksPerNanosecond() == 0)
      throw std::logic_error("configureKernelTime: the SystemC time resolution is already fixed at " +
                             sc_core::sc_get_time_resolution().to_string() +
                             ", coarser than the 1 ns cycle; call configureKernelTime() before making any sc_time");
  }
  configured = true;
}

sc_core::sc_time cyclesToTimeChecked(ir::Cycles cycles) {
  if (cycles > kMaxDurationCycles)
    throw std::overflow_error("a duration of " + std::to_string(cycles) +
                              " cycles is over 2^53, the longest the simulator counts");
  if (nowCycles() > kMaxSimulatedCycles - cycles)
    throw std::overflow_error("simulated time would pass 2^63 cycles, the end of the simulator's clock");
  return sc_core::sc_time::from_value(cycles * kTicksPerCycle());
}

ir::Cycles kTicksPerCycle() {
  // Reading the resolution fixes it for the process, so the value never changes afterwards.
  static const ir::Cycles ticks = [] {
    const ir::Cycles t = ticksPerNanosecond();
    if (t == 0)
      throw std::logic_error("kTicksPerCycle: the SystemC time resolution " +
                             sc_core::sc_get_time_resolution().to_string() + " is coarser than one 1 ns cycle");
    return t;
  }();
  return ticks;
}

}  // namespace ipusim::model
