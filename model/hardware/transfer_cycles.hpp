#pragma once
// The cycles a link takes to move bytes: the one rounding every link model
// uses (host link, IPU-Links, Streaming Memory), and Streaming Memory's
// transfer, which the compiler's estimate reads too (small and free of the
// hardware model's state, so the workload reader's fuzz target links it).
#include "model/ir/types.hpp"
#include "model/target.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::model::hardware {

// ceil(bytes / bytesPerCycle) for a fractional rate, robust to the rounding
// of rates like 64e9 / 1.33e9 (a result within 1e-9 of an integer is that
// integer). Throws std::overflow_error past 2^53 cycles.
ir::Cycles ceilDivide(std::uint64_t bytes, double bytesPerCycle);

// One IPU's transfer of `bytes` to or from Streaming Memory:
// streamingMemory.latencySeconds (in cycles, rounded up) +
// ceil(bytes / (streamingMemory.bytesPerSecond / clockHz)); 0 for no bytes.
ir::Cycles remoteTransferCycles(const Target& target, std::uint64_t bytes);

// A remote-buffer copy's transfer: every IPU moves its own bytes
// (`bytesPerIpu`, indexed by IPU) at once, and the copy lasts the longest
// (the completion sync after it is not included).
ir::Cycles remoteCopyCycles(const Target& target, const std::vector<std::uint64_t>& bytesPerIpu);

}  // namespace ipusim::model::hardware
