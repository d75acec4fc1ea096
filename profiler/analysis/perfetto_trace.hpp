#pragma once
// Perfetto's native trace (`ipusim export DIR -o out.pftrace`): a protobuf
// `Trace` of TracePackets with TrackEvents, which Perfetto UI and its trace
// processor read without the JSON importer's limits. Hand-encoded
// (protobuf_wire.hpp) after perfetto/protos/perfetto/trace/trace_packet.proto
// and track_event/*.proto; the field numbers used are listed in the .cpp.
// - the processes and tracks of the Chrome export (chrome_trace_layout.hpp):
//   a process track per process, a child track per profile track, a counter
//   track per counter series;
// - times in integer nanoseconds, ns = round(cycles * 1e9 / clock_hz),
//   halves away from zero (chrome_trace_time.hpp), from cycle 0 (no offset);
// - each slice is a TYPE_SLICE_BEGIN / TYPE_SLICE_END pair on its track, in
//   nesting order decided in cycles, streamed track by track (memory: the
//   open slices), named and categorised as in the profile, with
//   debug annotations ts_cycles and dur_cycles (exact), and run, program,
//   phase and bytes where known;
// - a slice of zero cycles is a TYPE_INSTANT;
// - each counter sample is a TYPE_COUNTER event with a double value.
#include "traces/profile_reader.hpp"

#include <cstdint>
#include <ostream>

namespace ipusim::profiler::analysis {

struct PerfettoTraceStats {
  std::int64_t tracks = 0;
  std::int64_t slices = 0;
  std::int64_t instants = 0;
  std::int64_t counterSamples = 0;
};

// Throws traces::ProfileError when the profile has no clock_hz.
PerfettoTraceStats writePerfettoTrace(const traces::ProfileReader& reader, std::ostream& out);

}  // namespace ipusim::profiler::analysis
