#pragma once
// What the trace exports (Chrome Trace Event JSON, Perfetto protobuf) show of
// a profile's tracks, shared so both formats group them alike: one process
// per IPU ("IPU n", pid n+2) for tracks with an IPU, and one process
// "Host and engine" (pid 1) for the others; one thread (JSON) or child track
// (Perfetto) per profile track.
#include "traces/profile_rows.hpp"

#include <cstdint>
#include <string>

namespace ipusim::profiler::analysis {

inline constexpr std::int64_t kHostProcess = 1;

std::int64_t processOf(const traces::TrackRow& track);
std::string processName(std::int64_t process);

}  // namespace ipusim::profiler::analysis
