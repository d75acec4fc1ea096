#pragma once
// Chrome Trace Event export (`ipusim export`): a JSON object
// {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {meta}} that
// Perfetto UI and chrome://tracing open.
// - one process per IPU ("IPU n", pid n+2) for tracks with an IPU, and one
//   process "Host and engine" (pid 1) for the others; one thread per profile
//   track (tid = track id), named by "M" thread_name events and ordered by the
//   track's sort order (thread_sort_index);
// - each slice is a complete "X" event: ts and dur in microseconds converted
//   from cycles with meta clock_hz (rounded to the picosecond, from the
//   start and end cycle, so a slice nested in another in cycles stays nested
//   in microseconds), with the exact cycles in args (ts_cycles, dur_cycles)
//   and run, program, phase, bytes where known;
// - each counter sample is a "C" event of its track's name.
// Slices are streamed track by track: memory does not grow with the profile.
#include "traces/profile_reader.hpp"

#include <cstdint>
#include <ostream>

namespace ipusim::profiler::analysis {

struct ChromeTraceStats {
  std::int64_t tracks = 0;
  std::int64_t slices = 0;
  std::int64_t counterSamples = 0;
};

// Throws traces::ProfileError when the profile has no clock_hz.
ChromeTraceStats writeChromeTrace(const traces::ProfileReader& reader, std::ostream& out);

// Cycles to integer picoseconds at `clockHz`: monotonic in cycles.
std::int64_t cyclesToPicoseconds(std::int64_t cycles, double clockHz);

}  // namespace ipusim::profiler::analysis
