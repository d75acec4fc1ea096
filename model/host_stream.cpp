#include "model/host_stream.hpp"

#include <stdexcept>
#include <utility>

namespace ipusim::model {

HostStream::HostStream(const ir::Stream& spec) : spec_(spec) {
  if (spec_.bufferDepth == 0)
    throw std::invalid_argument("stream '" + spec_.name + "': bufferDepth is 0, expected at least 1");
}

std::uint64_t HostStream::bytesPerCopy() const { return spec_.elementsPerCopy * ir::sizeOf(spec_.dtype); }

void HostStream::push(Bytes copy) {
  if (spec_.direction != ir::StreamDirection::HostToDevice)
    throw std::logic_error("stream '" + spec_.name + "': push() on a device-to-host stream");
  while (full()) sc_core::wait(changed_);
  fifo_.push_back(std::move(copy));
  changed_.notify(sc_core::SC_ZERO_TIME);
}

Bytes HostStream::pop() {
  if (spec_.direction != ir::StreamDirection::DeviceToHost)
    throw std::logic_error("stream '" + spec_.name + "': pop() on a host-to-device stream");
  while (fifo_.empty()) sc_core::wait(changed_);
  Bytes copy = std::move(fifo_.front());
  fifo_.pop_front();
  lastOrigin_ = origins_.front();
  origins_.pop_front();
  changed_.notify(sc_core::SC_ZERO_TIME);
  return copy;
}

void HostStream::connect(std::function<void(Bytes& copy)> callback) { callback_ = std::move(callback); }

Bytes HostStream::takeForDevice() {
  if (callback_) {
    Bytes copy(bytesPerCopy());
    callback_(copy);
    return copy;
  }
  while (fifo_.empty()) sc_core::wait(changed_);
  Bytes copy = std::move(fifo_.front());
  fifo_.pop_front();
  changed_.notify(sc_core::SC_ZERO_TIME);
  return copy;
}

void HostStream::waitForSpace() {
  while (!callback_ && full()) sc_core::wait(changed_);
}

void HostStream::giveFromDevice(Bytes copy, const DeviceOrigin& origin) {
  if (callback_) {
    lastOrigin_ = origin;
    callback_(copy);
    return;
  }
  while (full()) sc_core::wait(changed_);
  fifo_.push_back(std::move(copy));
  origins_.push_back(origin);
  changed_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace ipusim::model
