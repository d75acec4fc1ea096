#include "profiler/analysis/host_wait_share.hpp"

namespace ipusim::profiler::analysis {

HostWaitShare hostWaitShare(const ProfileReport& report) {
  return {report.captured.hostWaitCycles, report.captured.windowCycles};
}

}  // namespace ipusim::profiler::analysis
