#include "sim/host/batch_latency.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim::sim {

ir::Cycles BatchLatencies::percentile(double p) const {
  if (total_ == 0) return 0;
  // Nearest rank: the ceil(p n)-th smallest (1-based), at least the first.
  const auto rank = std::max<std::uint64_t>(1, std::uint64_t(std::ceil(p * double(total_))));
  std::uint64_t seen = 0;
  for (const auto& [cycles, n] : counts_)
    if ((seen += n) >= rank) return cycles;
  return counts_.rbegin()->first;
}

}  // namespace ipusim::sim
