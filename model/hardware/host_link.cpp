#include "model/hardware/host_link.hpp"

#include "model/hardware/ipu_link.hpp"

#include <stdexcept>

namespace ipusim::model::hardware {

HostLink::HostLink(const Target& target)
    : bytesPerCycle_(target.hostLink.bytesPerSecond / target.clockHz),
      latencyCycles_(target.secondsToCycles(target.hostLink.latencySeconds)) {}

ir::Cycles HostLink::transferCycles(std::uint64_t bytes) const {
  if (!(bytesPerCycle_ > 0))
    throw std::invalid_argument(
        "hostLink.bytesPerSecond is 0: a host stream copy needs a positive host-link bandwidth");
  return latencyCycles_ + ceilDivide(bytes, bytesPerCycle_);
}

void HostLink::acquire(ir::StreamDirection direction) {
  Channel& c = channel(direction);
  while (c.busy) sc_core::wait(c.freed);
  c.busy = true;
}

void HostLink::release(ir::StreamDirection direction) {
  Channel& c = channel(direction);
  c.busy = false;
  c.freed.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace ipusim::model::hardware
