#pragma once
// The share of time the IPU waits for the host, as the insights read it.
// This is the ONE place they take the figure from: it forwards to the
// report's definition (DeviceActivity's host wait over the captured runs,
// profiler/README.md "Host wait"), so that when the report's definition
// changes (StreamCopy host service and time outside Engine::run counted as
// waiting) only the forwarding line in host_wait_share.cpp changes.
#include "profiler/analysis/report.hpp"

namespace ipusim::profiler::analysis {

struct HostWaitShare {
  std::int64_t waitCycles = 0;    // cycles the IPU waits for the host
  std::int64_t windowCycles = 0;  // the time it is measured over
  double share() const { return windowCycles > 0 ? double(waitCycles) / double(windowCycles) : 0.0; }
};

HostWaitShare hostWaitShare(const ProfileReport& report);

}  // namespace ipusim::profiler::analysis
