#pragma once
// Range statistics: what happened between two cycles of a profile — the
// viewer's selection panel and compare view. The definitions are the
// command-line analyses' (profiler/analysis/device_activity.hpp,
// profiler/README.md), computed by that same code over the one window
// [from, to):
// - per IPU every cycle goes to one bucket, by priority compute > exchange >
//   ipu link > collective > sync > stream copy > Streaming Memory > idle, so the buckets add up to the range;
// - IPU waiting for the host: analysis::ipuWaitingForHost over [from, to);
// - StreamCopy Begin: cycles inside a Begin; host-link transfer: cycles
//   inside a StreamCopy Mid; compute/IO overlap: the share of transfer
//   cycles during which some IPU computes;
// - bytes to / from the host: Mid slices starting in the range, split by the
//   stream's direction (meta stream_directions, else the stream's name).
// Added here, for the panel:
// - bytes per stream (the Mid's parent "StreamCopy <stream>", else its track);
// - tile balance (per IPU, needs tile_phase_cycles): over the compute slices
//   in range, each weighted by the fraction of it inside the range,
//   sum(tile cycles) / sum(max tile cycles x tiles with work); parallel
//   efficiency: the same with all tiles of the IPU (meta tiles_per_ipu) in
//   the denominator.
// Slices are read through the (track_id, ts) index, so a short range of a
// huge profile costs what is in it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::traces {
class ProfileReader;
}

namespace ipusim::profiler {

struct IpuRangeStats {
  std::int64_t ipu = 0;
  // Exclusive buckets (see above): they add up to the range's cycles.
  std::int64_t compute = 0, exchange = 0, ipuLink = 0, collective = 0, sync = 0, streamCopy = 0, streamingMemory = 0,
               idle = 0;
  bool hasTileDetail = false;
  double tileBalance = 0;         // 0..1, 1 = every working tile as busy as the busiest
  double parallelEfficiency = 0;  // 0..1, 1 = every tile of the IPU as busy as the busiest
};

struct StreamBytes {
  std::int64_t bytes = 0;
  bool toHost = false;  // DeviceToHost
};

struct RangeStats {
  std::int64_t from = 0, to = 0, cycles = 0;
  std::vector<IpuRangeStats> ipus;
  std::int64_t hostWaitCycles = 0;          // inside some StreamCopy Begin
  std::int64_t ipuWaitingForHostCycles = 0;  // analysis::ipuWaitingForHost over the range
  std::int64_t hostTransferCycles = 0;     // inside some StreamCopy Mid
  std::int64_t transferOverlapCycles = 0;  // of those, while some IPU computes
  std::int64_t bytesToDevice = 0, bytesToHost = 0;
  std::map<std::string, StreamBytes> bytesByStream;  // stream name -> bytes, direction

  std::int64_t hostLinkBytes() const { return bytesToDevice + bytesToHost; }
  double computeIoOverlap() const {
    return hostTransferCycles > 0 ? double(transferOverlapCycles) / double(hostTransferCycles) : 0.0;
  }
  double share(std::int64_t part) const { return cycles > 0 ? double(part) / double(cycles) : 0.0; }
};

// Throws std::invalid_argument when to < from, traces::ProfileError on a
// read failure.
RangeStats computeRangeStats(const traces::ProfileReader& reader, std::int64_t from, std::int64_t to);

// A sorted list of disjoint [begin, end) intervals, and the operations on
// them (kept for callers and tests; the statistics use analysis::IntervalSet).
struct Interval {
  std::int64_t begin, end;
};
std::vector<Interval> unionOf(std::vector<Interval> intervals);
std::int64_t totalLength(const std::vector<Interval>& disjoint);
std::int64_t intersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace ipusim::profiler
