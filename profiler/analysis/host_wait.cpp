#include "profiler/analysis/host_wait.hpp"

#include <algorithm>

namespace ipusim::profiler::analysis {

IntervalSet capturedRunCycles(const std::vector<traces::RunRow>& runs) {
  std::vector<traces::RunRow> sorted = runs;
  std::sort(sorted.begin(), sorted.end(),
            [](const traces::RunRow& a, const traces::RunRow& b) { return a.startCycle < b.startCycle; });
  IntervalSet windows;
  std::int64_t previousEnd = 0;
  for (const auto& run : sorted) {
    if (run.captured) windows.add(std::min(previousEnd, run.startCycle), run.endCycle);
    previousEnd = std::max(previousEnd, run.endCycle);
  }
  return windows;
}

HostWaitBreakdown ipuWaitingForHost(const traces::ProfileReader& reader, const IntervalSet& windows) {
  HostWaitBreakdown result;
  result.windowCycles = windows.length();
  if (windows.empty()) return result;
  const std::int64_t from = windows.intervals().front().begin;
  const std::int64_t to = windows.intervals().back().end;

  IntervalSet insideRuns;
  for (const auto& run : reader.runs()) insideRuns.add(run.startCycle, run.endCycle);
  const IntervalSet outside = windows.subtract(insideRuns);

  IntervalSet begin, service;
  for (const auto& track : reader.tracks()) {
    if (track.kind != "stream") continue;
    // Streamed, not gathered: a long profile has millions of stream slices.
    reader.forEachSlice(track.id, [&](const traces::SliceRow& s) {
      if (s.ts >= to || (s.ts < from && s.ts + s.dur <= from)) return;  // outside [from, to), as slices() would
      if (s.category == "stream_copy_begin") begin.add(s.ts, s.ts + s.dur);
      else if (s.category == "stream_copy_host_service") service.add(s.ts, s.ts + s.dur);
    });
  }
  const IntervalSet beginIn = begin.intersect(windows).subtract(outside);
  const IntervalSet serviceIn = service.intersect(windows).subtract(outside);
  IntervalSet waiting = outside;
  waiting.add(beginIn);
  waiting.add(serviceIn);
  result.outsideRunCycles = outside.length();
  result.beginCycles = beginIn.length();
  result.hostServiceCycles = serviceIn.length();
  result.waitingCycles = waiting.length();
  return result;
}

HostWaitBreakdown ipuWaitingForHost(const traces::ProfileReader& reader) {
  return ipuWaitingForHost(reader, capturedRunCycles(reader.runs()));
}

nlohmann::json hostWaitToJson(const HostWaitBreakdown& wait) {
  return {{"share", wait.share()},
          {"window_cycles", wait.windowCycles},
          {"waiting_cycles", wait.waitingCycles},
          {"outside_run_cycles", wait.outsideRunCycles},
          {"stream_copy_begin_cycles", wait.beginCycles},
          {"host_service_cycles", wait.hostServiceCycles}};
}

}  // namespace ipusim::profiler::analysis
