#pragma once
// IpuLink: the links between IPUs. Every ordered pair of IPUs has its own
// link bandwidth (links in each direction work in parallel), so a copy
// phase's link part lasts as long as its busiest pair:
//   cycles(B) = ipuLink.latencyCycles + ceil(B / (ipuLink.bytesPerSecond / clockHz)).
#include "model/ir/types.hpp"
#include "model/target.hpp"

namespace ipusim::model::hardware {

class IpuLink {
 public:
  explicit IpuLink(const Target& target);
  // Cycles to move `bytes` from one IPU to another. Throws std::invalid_argument
  // naming ipuLink.bytesPerSecond when the target has no link bandwidth.
  ir::Cycles transferCycles(std::uint64_t bytes) const;

 private:
  double bytesPerCycle_;
  ir::Cycles latencyCycles_;
};

// ceil(bytes / bytesPerCycle) for a fractional rate, robust to the rounding
// of rates like 64e9 / 1.33e9 (a result within 1e-9 of an integer is that integer).
ir::Cycles ceilDivide(std::uint64_t bytes, double bytesPerCycle);

}  // namespace ipusim::model::hardware
