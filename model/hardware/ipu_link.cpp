#include "model/hardware/ipu_link.hpp"

#include "model/target_limits.hpp"

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

IpuLink::IpuLink(const Target& target)
    : bytesPerCycle_(target.ipuLink.bytesPerSecond / target.clockHz),
      latencyCycles_(target.ipuLink.latencyCycles) {}

ir::Cycles IpuLink::transferCycles(std::uint64_t bytes) const {
  if (!(bytesPerCycle_ > 0))
    throw std::invalid_argument(
        "ipuLink.bytesPerSecond is 0: a copy between IPUs needs a positive IPU-Link bandwidth");
  return latencyCycles_ + ceilDivide(bytes, bytesPerCycle_);
}

}  // namespace ipusim::model::hardware
