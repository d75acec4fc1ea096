#include "profiler/analysis/chrome_trace_layout.hpp"

namespace ipusim::profiler::analysis {

std::int64_t processOf(const traces::TrackRow& track) { return track.ipu >= 0 ? track.ipu + 2 : kHostProcess; }

std::string processName(std::int64_t process) {
  return process == kHostProcess ? "Host and engine" : "IPU " + std::to_string(process - 2);
}

}  // namespace ipusim::profiler::analysis
