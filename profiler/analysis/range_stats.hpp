#pragma once
// Range statistics: what happened between two cycles of a profile. Shared by
// the viewer's selection panel and the command-line report tools.
//
// Definitions (all over [from, to), slices clipped to it; "union" counts
// overlapping slices once):
// - per IPU, from its "bsp" track: compute / exchange / sync = summed cycles
//   of slices of that category; streamCopy = union of stream_copy* slices on
//   "stream" tracks of that IPU (a stream track without an IPU counts for
//   every IPU: a StreamCopy stalls the whole program); idle = cycles not
//   covered by the union of all of those.
// - tile balance (per IPU, needs tile_phase_cycles): over the compute slices
//   in range, each weighted by the fraction of it inside the range,
//   sum(tile cycles) / sum(max tile cycles x tiles with work);
//   parallel efficiency: the same with all tiles of the IPU in the
//   denominator (meta tiles_per_ipu).
// - host-link bytes: bytes of stream_copy_mid slices starting in range, in
//   total and per stream track (the profile does not record directions; the
//   stream names tell infeed from outfeed).
// - compute/IO overlap: IO = union of stream_copy_mid slices and host-track
//   slices; overlap = |IO n union(compute)| / |IO|.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

struct sqlite3;

namespace ipusim::traces {
class ProfileReader;
}

namespace ipusim::profiler {

struct IpuRangeStats {
  std::int64_t ipu = 0;
  std::int64_t compute = 0, exchange = 0, sync = 0, streamCopy = 0, idle = 0;
  bool hasTileDetail = false;
  double tileBalance = 0;         // 0..1, 1 = every working tile as busy as the busiest
  double parallelEfficiency = 0;  // 0..1, 1 = every tile of the IPU as busy as the busiest
};

struct RangeStats {
  std::int64_t from = 0, to = 0, cycles = 0;
  std::vector<IpuRangeStats> ipus;
  std::int64_t hostLinkBytes = 0;
  std::map<std::string, std::int64_t> bytesByStream;  // stream track name -> bytes
  std::int64_t ioCycles = 0;
  std::int64_t computeIoOverlapCycles = 0;
  double computeIoOverlap() const {
    return ioCycles > 0 ? double(computeIoOverlapCycles) / double(ioCycles) : 0.0;
  }
  double share(std::int64_t part) const { return cycles > 0 ? double(part) / double(cycles) : 0.0; }
};

// Throws std::invalid_argument when to < from, ProfileError on SQL failure.
RangeStats computeRangeStats(const traces::ProfileReader& reader, std::int64_t from, std::int64_t to);

// A sorted list of disjoint [begin, end) intervals, and the operations the
// statistics need (exposed for tests and other analyses).
struct Interval {
  std::int64_t begin, end;
};
std::vector<Interval> unionOf(std::vector<Interval> intervals);
std::int64_t totalLength(const std::vector<Interval>& disjoint);
std::int64_t intersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace ipusim::profiler
