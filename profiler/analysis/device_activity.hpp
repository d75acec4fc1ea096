#pragma once
// DeviceActivity: where device time goes inside a set of time windows — the
// one place that defines the phase proportions, host wait, host-link
// transfer, compute/IO overlap and host bytes used by `ipusim report`,
// `ipusim compare` (and meant for the viewer's range statistics).
//
// Definitions (see profiler/README.md):
// - Sources: slices on "bsp" tracks (one per IPU: compute, exchange, sync,
//   ipu_link, collective, stream_copy*) and on "stream" tracks (stream_copy,
//   stream_copy_begin/mid/end). A stream track with ipu = -1 is a device-wide
//   copy and counts for every IPU. "program" tracks repeat the same time
//   nested by program step and are not used.
// - Time is the length of a union of slices clipped to the windows, so nested
//   or overlapping slices are never counted twice.
// - Per IPU every window cycle is attributed to exactly one bucket, by
//   priority: compute > exchange > ipu link > collective > sync > stream copy > Streaming Memory > idle. The
//   buckets sum to the window length.
// - StreamCopy Begin (hostWaitCycles): window cycles inside some StreamCopy
//   Begin phase (the device waits for data or buffer space). It is one part
//   of "IPU waiting for the host", whose one definition is host_wait.hpp.
// - Host-link transfer: window cycles inside some StreamCopy Mid phase.
// - Overlap: the fraction of host-link transfer cycles during which at least
//   one IPU computes.
// - Host bytes: the bytes of StreamCopy Mid slices on stream tracks that
//   start inside the windows, split by the stream's direction (see
//   streamDirection()); the stream is named by the Mid slice's parent
//   ("StreamCopy <stream>"), else by its track.
// - Host IO overlap: the fraction of host data work (host-track slices of
//   category "host_io": preparing batches, dequeuing the outfeed) done while
//   some IPU is active (any phase but idle) — the work infeed/outfeed queues
//   hide behind the device; without them it happens between runs.
#include "profiler/analysis/interval_set.hpp"
#include "traces/profile_reader.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

struct PhaseCycles {
  std::int64_t compute = 0, exchange = 0, ipuLink = 0, collective = 0, sync = 0, streamCopy = 0, streamingMemory = 0,
               idle = 0;
  std::int64_t total() const {
    return compute + exchange + ipuLink + collective + sync + streamCopy + streamingMemory + idle;
  }
  PhaseCycles& operator+=(const PhaseCycles& o);
};

struct DeviceActivity {
  std::int64_t windowCycles = 0;     // length of the windows
  std::int64_t firstIpu = 0;         // the IPU of perIpu[0]
  std::vector<PhaseCycles> perIpu;   // index = IPU - firstIpu
  std::int64_t hostWaitCycles = 0;         // inside StreamCopy Begin (see above)
  std::int64_t hostTransferCycles = 0;
  std::int64_t transferOverlapCycles = 0;  // transfer cycles while some IPU computes
  std::int64_t hostIoCycles = 0;           // host data work (category host_io)
  std::int64_t hostIoOverlapCycles = 0;    // of which while some IPU is active
  std::int64_t bytesToDevice = 0, bytesToHost = 0;

  // Sum over IPUs; its total() is windowCycles * IPUs.
  PhaseCycles allIpus() const;
  // Fraction of IPU time (all IPUs) in a bucket; 0 when there is no time.
  double fraction(std::int64_t PhaseCycles::*bucket) const;
  double hostWaitFraction() const;
  // IPU `ipu`'s idle share: its idle cycles (no compute, exchange, link,
  // sync or stream copy phase) over its window cycles outside stream copies
  // (a stream copy stalls the whole device on the host link: the IPUs are
  // stopped then, not idle while others work). What a pipeline's ramp-up and
  // ramp-down leave unused. 0 when there is no such time or no such IPU.
  // `ipu` indexes perIpu.
  double idleShare(std::size_t ipu) const;
  // Overlap as defined above; 0 when there was no transfer.
  double overlapFraction() const;
  // Host IO overlap as defined above; 0 when there was no host data work.
  double hostIoOverlapFraction() const;
};

enum class StreamDirection { HostToDevice, DeviceToHost };
// A stream's direction: from meta "stream_directions" (a JSON object
// {"stream name": "HostToDevice" | "DeviceToHost"}); a stream it does not
// name is a traces::ProfileError naming `profile`. Without that meta value
// (a profile that has none), from its name: one containing "outfeed", "d2h",
// "to_host" or "device_to_host" (any case) goes to the host, any other to
// the device. `declared` is that meta object, read by readStreamDirections().
using StreamDirections = std::map<std::string, StreamDirection>;
StreamDirection streamDirection(const std::string& streamName, const StreamDirections& declared,
                                const std::string& profile);
// The reader refuses a profile whose meta value is not such an object when
// it opens it (check 2, profile_rules.json).
StreamDirections readStreamDirections(const traces::ProfileReader& reader);

// Measures activity inside `windows` (cycles), per IPU from the first IPU
// with a BSP track (0 in a profile of every IPU; an instance's first). `numIpus`
// is a lower bound on the IPU count (the profile's bsp tracks may name more).
DeviceActivity measureDeviceActivity(const traces::ProfileReader& reader, const IntervalSet& windows,
                                     std::int64_t numIpus);

// The windows of the captured runs ([start, end) of each run with captured = 1).
IntervalSet capturedRunWindows(const std::vector<traces::RunRow>& runs);

}  // namespace ipusim::profiler::analysis
