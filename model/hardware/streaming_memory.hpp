#pragma once
// StreamingMemory: the remote buffers (model/ir/remote_buffer.hpp) of a
// loaded executable in the IPU-M2000's Streaming Memory — their bytes in
// functional mode — and the timing of the RemoteCopy programs that move
// them. A copy holds every IPU (Poplar runs it as a host exchange, between
// syncs): each IPU moves the bytes of the region on its tiles over its own
// link to the gateway,
//   cycles(IPU) = streamingMemory.latencySeconds (in cycles, rounded up)
//               + ceil(bytes(IPU) / (streamingMemory.bytesPerSecond / clockHz)),
// and the copy lasts the longest of these, then an external sync ends it.
// The buffers an IPU's copies touch must fit streamingMemory.bytesPerIpu
// (where their bytes lie: remote_buffer_bytes.hpp).
#include "model/hardware/transfer_cycles.hpp"
#include "model/ir/executable.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ipusim::model::hardware {

// (remoteCopyCycles, transfer_cycles.hpp: the formula above; the
// compiler's estimate reads the same function.)
class StreamingMemory {
 public:
  // Throws std::invalid_argument naming the buffer and the parameter when an
  // IPU's buffers exceed its capacity (or the target has none).
  StreamingMemory(const ir::Executable& exe, const Target& target, bool functional);

  // A RemoteCopy program's transfer cycles (the longest IPU's) and bytes per IPU.
  struct CopyPlan {
    ir::Cycles cycles = 0;
    std::vector<std::uint64_t> bytesPerIpu;  // indexed by IPU
  };
  const CopyPlan& plan(ir::Id program) const { return plans_.at(program); }
  // Functional mode: the buffer's bytes (the tensor region's layout, row-major).
  std::vector<std::uint8_t>& bytes(ir::Id buffer) { return bytes_.at(buffer); }

 private:
  std::unordered_map<ir::Id, CopyPlan> plans_;
  std::vector<std::vector<std::uint8_t>> bytes_;
};

}  // namespace ipusim::model::hardware
