#pragma once
// The share of time the IPU waits for the host, as the insights and the
// operations views read it. This is the ONE place those consumers take the
// figure from: it forwards to the report's definition (DeviceActivity's host
// wait over the captured runs, profiler/README.md "Host wait"), so that when
// that definition changes (StreamCopy service time and time outside
// Engine::run counted as waiting) only this forwarding line changes.
#include "profiler/analysis/device_activity.hpp"

namespace ipusim::profiler::analysis {

struct HostWaitShare {
  std::int64_t waitCycles = 0;    // cycles the IPU waits for the host
  std::int64_t windowCycles = 0;  // the time it is measured over
  double share() const { return windowCycles > 0 ? double(waitCycles) / double(windowCycles) : 0.0; }
};

HostWaitShare hostWaitShare(const DeviceActivity& captured);

}  // namespace ipusim::profiler::analysis
