#include "model/hardware/transfer_cycles.hpp"

#include "model/target_limits.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ipusim::model::hardware {

ir::Cycles ceilDivide(std::uint64_t bytes, double bytesPerCycle) {
  const double exact = double(bytes) / bytesPerCycle;
  // The target's limits keep one byte under kMaxDurationCycles; many bytes may still not fit.
  if (!(exact <= double(kMaxDurationCycles)))
    throw std::overflow_error("a transfer of " + std::to_string(bytes) + " bytes at " + std::to_string(bytesPerCycle) +
                              " bytes/cycle takes more than 2^53 cycles, the longest duration the simulator counts");
  const double nearest = std::round(exact);
  if (std::fabs(exact - nearest) <= 1e-9 * std::max(1.0, nearest)) return ir::Cycles(nearest);
  return ir::Cycles(std::ceil(exact));
}

ir::Cycles remoteTransferCycles(const Target& target, std::uint64_t bytes) {
  if (bytes == 0) return 0;
  return target.secondsToCycles(target.streamingMemory.latencySeconds, "streamingMemory.latencySeconds") +
         ceilDivide(bytes, target.streamingMemory.bytesPerSecond / target.clockHz);
}

ir::Cycles remoteCopyCycles(const Target& target, const std::vector<std::uint64_t>& bytesPerIpu) {
  ir::Cycles longest = 0;
  for (std::uint64_t bytes : bytesPerIpu) longest = std::max(longest, remoteTransferCycles(target, bytes));
  return longest;
}

}  // namespace ipusim::model::hardware
