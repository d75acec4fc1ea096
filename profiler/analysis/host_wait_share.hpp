#pragma once
// The share of time the IPU waits for the host, as the insights read it.
// This is the ONE place they take the figure from: it forwards to the
// report's figure, ipuWaitingForHost (profiler/analysis/host_wait.hpp: time
// outside Engine::run, StreamCopy Begin and host service, over the captured
// runs with the host time before each).
#include "profiler/analysis/report.hpp"

#include <limits>

namespace ipusim::profiler::analysis {

struct HostWaitShare {
  std::int64_t waitCycles = 0;    // cycles the IPU waits for the host
  std::int64_t windowCycles = 0;  // the time it is measured over
  // NaN when nothing was measured (no captured run), as HostWaitBreakdown::share.
  double share() const {
    return windowCycles > 0 ? double(waitCycles) / double(windowCycles) : std::numeric_limits<double>::quiet_NaN();
  }
};

HostWaitShare hostWaitShare(const ProfileReport& report);

}  // namespace ipusim::profiler::analysis
