#pragma once
// HostStream: the host side of a data stream, a FIFO of whole copies
// (elementsPerCopy elements each) with capacity Stream::bufferDepth.
//
// Host-to-device: the host pushes copies (push() blocks in simulated time
// while the FIFO is full); a device StreamCopy waits while it is empty (its
// Begin phase), or, when a callback is connected, asks the callback for the
// data at the moment of the copy (Poplar's connectStream with a buffer).
// Device-to-host: a device StreamCopy waits while the FIFO is full (an outfeed
// blocking the device); the host pops copies (pop() blocks while empty), or a
// connected callback receives each copy as it lands.
// push/pop are called from SC_THREADs. In synthetic mode the payloads are empty.
#include "model/ir/stream.hpp"
#include "model/observer.hpp"

#include <deque>
#include <functional>
#include <systemc>
#include <vector>

namespace ipusim::model {

using Bytes = std::vector<std::uint8_t>;

// Where a device-to-host copy came from: when the device delivered it, in
// which Engine::run and during which step (-1: outside any step).
struct DeviceOrigin {
  Cycles at = 0;
  std::int64_t run = -1;
  std::int64_t step = -1;
};

class HostStream {
 public:
  explicit HostStream(const ir::Stream& spec);
  const ir::Stream& spec() const { return spec_; }
  std::uint64_t bytesPerCopy() const;

  // --- host side (SC_THREAD context) ---
  void push(Bytes copy);  // HostToDevice; blocks while full
  Bytes pop();            // DeviceToHost; blocks while empty
  // Origin of the copy the last pop() returned, or the last one a callback
  // received (DeviceToHost).
  const DeviceOrigin& lastOrigin() const { return lastOrigin_; }
  std::size_t size() const { return fifo_.size(); }
  bool full() const { return fifo_.size() >= spec_.bufferDepth; }
  // A callback makes the stream always ready: HostToDevice callbacks fill the
  // copy, DeviceToHost callbacks receive it.
  void connect(std::function<void(Bytes& copy)> callback);
  bool hasCallback() const { return bool(callback_); }
  // Host-side service time of each copy (added to its Mid phase): the time
  // the host runtime takes to hand a buffer to, or take one from, the link.
  void setHostServiceCycles(ir::Cycles cycles) { hostServiceCycles_ = cycles; }
  ir::Cycles hostServiceCycles() const { return hostServiceCycles_; }
  // One-shot extra wait before the next device copy can begin (the host
  // runtime sets it at the start of a run: the stream service starting up).
  void delayNextCopy(ir::Cycles cycles) { nextCopyDelay_ = cycles; }

  // --- device side (called by the model) ---
  Bytes takeForDevice();           // HostToDevice: waits while empty (Begin)
  void waitForSpace();             // DeviceToHost: waits while full and no callback (Begin)
  void giveFromDevice(Bytes copy, const DeviceOrigin& origin); // DeviceToHost: waits while full, then delivers
  ir::Cycles consumeNextCopyDelay() { auto d = nextCopyDelay_; nextCopyDelay_ = 0; return d; }

 private:
  ir::Stream spec_;
  std::deque<Bytes> fifo_;
  std::deque<DeviceOrigin> origins_;  // DeviceToHost: one per fifo_ entry
  DeviceOrigin lastOrigin_;
  std::function<void(Bytes&)> callback_;
  ir::Cycles hostServiceCycles_ = 0;
  ir::Cycles nextCopyDelay_ = 0;
  sc_core::sc_event changed_;
};

}  // namespace ipusim::model
