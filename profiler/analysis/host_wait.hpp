#pragma once
// "IPU waiting for the host": the one definition of the figure `ipusim run
// --json`, `report`, `compare` and the viewer show (as ipu_waiting_for_host,
// a share from 0 to 1).
//
// Definition. Inside a set of windows (cycles), the device is waiting for the
// host during the union of:
//   (a) time outside every Engine::run (the host dispatching the next run,
//       preparing data between runs, draining results after the last one);
//   (b) StreamCopy Begin phases (the device waits for the host to have data
//       or buffer space: an empty infeed, a full outfeed, the stream service
//       starting up);
//   (c) StreamCopy host service phases ("Mid: host service", category
//       stream_copy_host_service: the host runtime handing a buffer over).
// The host-link transfer itself (StreamCopy Mid) is not waiting for the host:
// it is the link's time. Time is the length of the union clipped to the
// windows, so overlapping sources are never counted twice; the share is that
// length over the windows' length.
//
// Which windows: the profile holds slices only for captured runs, so the
// job-level figure is measured over capturedRunCycles(): each captured run
// together with the host time before it (from the end of the previous run,
// or from cycle 0 for the first run). The viewer's selection uses its own
// window with the same function.
#include "profiler/analysis/interval_set.hpp"
#include "traces/profile_reader.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace ipusim::profiler::analysis {

struct HostWaitBreakdown {
  std::int64_t windowCycles = 0;
  std::int64_t outsideRunCycles = 0;   // (a)
  std::int64_t beginCycles = 0;        // (b), inside runs
  std::int64_t hostServiceCycles = 0;  // (c), inside runs
  std::int64_t waitingCycles = 0;      // union of (a), (b), (c)
  // Whether there was anything to measure over: a profile with no captured
  // run (autoReport.executionProfileProgramRunCount 0) has no window.
  bool measured() const { return windowCycles > 0; }
  // waitingCycles / windowCycles; NaN when nothing was measured, which the
  // texts show as "n/a" (formatPercent) and JSON as null (it read as 0.0%:
  // "the IPU never waits", of a run no one looked at).
  double share() const {
    return measured() ? double(waitingCycles) / double(windowCycles) : std::numeric_limits<double>::quiet_NaN();
  }
};

// Each captured run with the host time before it: [end of the previous run
// (0 for the first), end of the run). `runs` in any order.
IntervalSet capturedRunCycles(const std::vector<traces::RunRow>& runs);

// The figure over `windows`. Reads the runs table and the stream tracks'
// Begin and host service slices. Throws traces::ProfileError on a read failure.
HostWaitBreakdown ipuWaitingForHost(const traces::ProfileReader& reader, const IntervalSet& windows);

// The job-level figure: ipuWaitingForHost over capturedRunCycles(reader.runs()).
HostWaitBreakdown ipuWaitingForHost(const traces::ProfileReader& reader);

// {"share", "window_cycles", "waiting_cycles", "outside_run_cycles",
//  "stream_copy_begin_cycles", "host_service_cycles"}
nlohmann::json hostWaitToJson(const HostWaitBreakdown& wait);

}  // namespace ipusim::profiler::analysis
