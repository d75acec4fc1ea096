#include "profiler/analysis/host_wait_share.hpp"

namespace ipusim::profiler::analysis {

HostWaitShare hostWaitShare(const DeviceActivity& captured) {
  return {captured.hostWaitCycles, captured.windowCycles};
}

}  // namespace ipusim::profiler::analysis
