#include "model/hardware/ipu_link.hpp"

#include <cmath>
#include <stdexcept>

namespace ipusim::model::hardware {

ir::Cycles ceilDivide(std::uint64_t bytes, double bytesPerCycle) {
  const double exact = double(bytes) / bytesPerCycle;
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
