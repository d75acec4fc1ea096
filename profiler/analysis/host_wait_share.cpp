#include "profiler/analysis/host_wait_share.hpp"

namespace ipusim::profiler::analysis {

HostWaitShare hostWaitShare(const ProfileReport& report) {
  return {report.hostWait.waitingCycles, report.hostWait.windowCycles};  // ipuWaitingForHost (host_wait.hpp)
}

}  // namespace ipusim::profiler::analysis
