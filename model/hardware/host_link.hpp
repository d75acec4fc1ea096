#pragma once
// HostLink: the PCIe link between host and device. One channel per direction
// (host-to-device, device-to-host), each a resource that serialises the
// copies using it: a copy holds its channel for its host service and Mid
// phases (the host runtime owns the buffer hand-off while the DMA runs).
//   Mid(B) = hostLink.latencySeconds (in cycles, rounded up)
//          + ceil(B / (hostLink.bytesPerSecond / clockHz)).
// The host's service time is the stream's (HostStream::hostServiceCycles), not the link's.
#include "model/ir/stream.hpp"
#include "model/target.hpp"

#include <systemc>

namespace ipusim::model::hardware {

class HostLink {
 public:
  explicit HostLink(const Target& target);
  // Mid-phase cycles of a copy of `bytes`. Throws std::invalid_argument naming
  // hostLink.bytesPerSecond when the target has no host-link bandwidth.
  ir::Cycles transferCycles(std::uint64_t bytes) const;
  // SC_THREAD context: waits until the direction's channel is free, takes it.
  void acquire(ir::StreamDirection direction);
  void release(ir::StreamDirection direction);

 private:
  struct Channel {
    bool busy = false;
    sc_core::sc_event freed;
  };
  Channel& channel(ir::StreamDirection d) { return d == ir::StreamDirection::HostToDevice ? toDevice_ : toHost_; }
  double bytesPerCycle_;
  ir::Cycles latencyCycles_;
  Channel toDevice_, toHost_;
};

}  // namespace ipusim::model::hardware
