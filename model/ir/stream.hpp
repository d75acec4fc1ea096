#pragma once
// Host data streams: FIFOs between the host and the device (infeed, outfeed,
// or a plain per-run copy). One StreamCopy moves `elementsPerCopy` elements.
#include "model/ir/types.hpp"

namespace ipusim::ir {

enum class StreamDirection : std::uint8_t { HostToDevice, DeviceToHost };

struct Stream {
  Id id = kNoId;
  std::string name;
  StreamDirection direction = StreamDirection::HostToDevice;
  DType dtype = DType::Float;
  std::uint64_t elementsPerCopy = 0;
  std::uint32_t bufferDepth = 1;  // host-side FIFO capacity, in copies
  DebugInfo debug;
};

}  // namespace ipusim::ir
