#pragma once
// Chrome Trace Event export (`ipusim export`): a JSON object
// {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {meta}} that
// Perfetto UI, the Chrome DevTools performance panel and speedscope open.
// Processes and threads follow chrome_trace_layout.hpp (as the Perfetto
// export does); times are chrome_trace_time.hpp's exact binary fractions of
// a microsecond:
// - each slice of at least one cycle is a complete "X" event; in any
//   consumer's double arithmetic (ts + dur, differences from a thread's first
//   event) a child ends at or before its parent's end and its next
//   sibling's start, and its dur converts back to its exact cycles; a CI
//   test runs the DevTools trace engine and speedscope's importer on real
//   exports (tests/trace_consumers);
// - a slice of zero cycles is a thread-scoped instant ("I", the spelling
//   DevTools reads; Perfetto reads it too, speedscope skips it), not a
//   zero-length slice at its parent's start;
// - events carry no per-slice args: speedscope keys frames by name and args,
//   so per-slice values (cycles, run) kept any two frames from grouping in
//   its Left Heavy and Sandwich views. The exact cycles, runs, programs and
//   bytes are in the Perfetto export's debug annotations and in the profile;
// - every time is shifted by 1 us (otherData.ts_offset_us): DevTools leaves
//   events at ts 0 out when it frames the trace;
// - each counter sample is a "C" event of its track's name.
// Slices are streamed track by track: memory does not grow with the profile.
#include "traces/profile_reader.hpp"

#include <cstdint>
#include <ostream>

namespace ipusim::profiler::analysis {

// Added to every JSON time, in trace units (1 us): nothing sits at ts 0.
inline constexpr std::int64_t kChromeTraceOffsetUnits = 4096;

struct ChromeTraceStats {
  std::int64_t tracks = 0;
  std::int64_t slices = 0;     // "X" events
  std::int64_t instants = 0;   // slices of zero cycles: "I" events
  std::int64_t counterSamples = 0;
};

// Throws traces::ProfileError when the profile has no clock_hz.
ChromeTraceStats writeChromeTrace(const traces::ProfileReader& reader, std::ostream& out);

}  // namespace ipusim::profiler::analysis
