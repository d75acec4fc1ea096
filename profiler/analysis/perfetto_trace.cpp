#include "profiler/analysis/perfetto_trace.hpp"

#include "profiler/analysis/chrome_trace_layout.hpp"
#include "profiler/analysis/chrome_trace_time.hpp"
#include "profiler/analysis/profile_target.hpp"
#include "profiler/analysis/protobuf_wire.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

namespace {

// Field numbers (perfetto/protos/perfetto/trace/...).
namespace trace { constexpr std::uint32_t kPacket = 1; }
namespace packet {
constexpr std::uint32_t kTimestamp = 8, kTrustedSequenceId = 10, kTrackEvent = 11, kSequenceFlags = 13,
                        kTrackDescriptor = 60;
constexpr std::uint64_t kIncrementalStateCleared = 1;
}  // namespace packet
namespace track {  // TrackDescriptor
constexpr std::uint32_t kUuid = 1, kName = 2, kProcess = 3, kParentUuid = 5, kCounter = 8;
}
namespace process { constexpr std::uint32_t kPid = 1, kName = 6; }  // ProcessDescriptor
namespace event {  // TrackEvent
constexpr std::uint32_t kDebugAnnotations = 4, kType = 9, kTrackUuid = 11, kCategories = 22, kName = 23,
                        kDoubleCounterValue = 44;
constexpr std::uint64_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;
}  // namespace event
namespace annotation { constexpr std::uint32_t kIntValue = 4, kStringValue = 6, kName = 10; }  // DebugAnnotation

constexpr std::uint64_t kSequenceId = 1;
std::uint64_t processUuid(std::int64_t process) { return 1000 + static_cast<std::uint64_t>(process); }
std::uint64_t trackUuid(std::int64_t trackId) { return 1000000 + static_cast<std::uint64_t>(trackId); }

class PacketWriter {
 public:
  explicit PacketWriter(std::ostream& out) : out_(out) {}
  void write(ProtoMessage packet) {
    packet.varint(packet::kTrustedSequenceId, kSequenceId);
    if (first_) packet.varint(packet::kSequenceFlags, packet::kIncrementalStateCleared);
    first_ = false;
    out_ << ProtoMessage().message(trace::kPacket, packet).data();
  }
  void event(std::int64_t ns, const ProtoMessage& trackEvent) {
    ProtoMessage packet;
    packet.varint(packet::kTimestamp, static_cast<std::uint64_t>(ns));
    write(packet.message(packet::kTrackEvent, trackEvent));
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

void annotate(ProtoMessage& ev, const char* name, std::int64_t value) {
  ev.message(event::kDebugAnnotations,
             ProtoMessage().text(annotation::kName, name).int64(annotation::kIntValue, value));
}

ProtoMessage sliceEvent(std::uint64_t uuid, const traces::SliceRow& s, std::uint64_t type) {
  ProtoMessage ev;
  ev.varint(event::kType, type).varint(event::kTrackUuid, uuid);
  ev.text(event::kName, s.name).text(event::kCategories, s.category);
  annotate(ev, "ts_cycles", s.ts);
  annotate(ev, "dur_cycles", s.dur);
  if (s.runId >= 0) annotate(ev, "run", s.runId);
  if (s.programId >= 0) annotate(ev, "program", s.programId);
  if (s.phaseId >= 0) annotate(ev, "phase", s.phaseId);
  if (s.bytes >= 0) annotate(ev, "bytes", s.bytes);
  return ev;
}

// One track's slices as begin/end pairs, streamed in the reader's order (ts,
// then depth: a parent before the children that start with it): each open
// slice is ended before the next one that starts at or after its end, in
// cycles (nanoseconds may merge neighbours). Memory: the open slices only.
class TrackSliceWriter {
 public:
  TrackSliceWriter(PacketWriter& packets, std::uint64_t uuid, double clockHz, PerfettoTraceStats& stats)
      : packets_(packets), uuid_(uuid), clockHz_(clockHz), stats_(stats) {}

  void add(const traces::SliceRow& s) {
    closeUntil(s.ts);
    const std::int64_t begin = cyclesToNanoseconds(s.ts, clockHz_);
    if (s.dur <= 0) {
      packets_.event(begin, sliceEvent(uuid_, s, event::kInstant));
      ++stats_.instants;
      return;
    }
    // A slice that outlasts its enclosing one (a damaged profile) is cut at
    // that end: the track stays a stack.
    const std::int64_t end = open_.empty() ? s.ts + s.dur : std::min(s.ts + s.dur, open_.back());
    packets_.event(begin, sliceEvent(uuid_, s, event::kSliceBegin));
    open_.push_back(end);
    ++stats_.slices;
  }
  void finish() { closeUntil(std::numeric_limits<std::int64_t>::max()); }

 private:
  void closeUntil(std::int64_t cycle) {
    while (!open_.empty() && open_.back() <= cycle) {
      packets_.event(cyclesToNanoseconds(open_.back(), clockHz_),
                     ProtoMessage().varint(event::kType, event::kSliceEnd).varint(event::kTrackUuid, uuid_));
      open_.pop_back();
    }
  }

  PacketWriter& packets_;
  std::uint64_t uuid_;
  double clockHz_;
  PerfettoTraceStats& stats_;
  std::vector<std::int64_t> open_;  // end cycles of the open slices
};

}  // namespace

PerfettoTraceStats writePerfettoTrace(const traces::ProfileReader& reader, std::ostream& out) {
  const double clockHz = readProfileTarget(reader).requireClockHz();
  const auto tracks = reader.tracks();
  PerfettoTraceStats stats;
  PacketWriter packets(out);

  std::set<std::int64_t> processes{kHostProcess};
  for (const auto& t : tracks) processes.insert(processOf(t));
  for (const std::int64_t p : processes)
    packets.write(ProtoMessage().message(
        packet::kTrackDescriptor,
        ProtoMessage().varint(track::kUuid, processUuid(p)).message(
            track::kProcess, ProtoMessage().int64(process::kPid, p).text(process::kName, processName(p)))));

  for (const auto& t : tracks) {
    ++stats.tracks;
    const std::uint64_t uuid = trackUuid(t.id);
    ProtoMessage descriptor;
    descriptor.varint(track::kUuid, uuid).varint(track::kParentUuid, processUuid(processOf(t)));
    descriptor.text(track::kName, t.name);
    if (t.kind == "counter") descriptor.message(track::kCounter, ProtoMessage());
    packets.write(ProtoMessage().message(packet::kTrackDescriptor, descriptor));
    if (t.kind == "counter") {
      for (const auto& sample : reader.counters(t.id)) {
        packets.event(cyclesToNanoseconds(sample.ts, clockHz), ProtoMessage()
                                                                  .varint(event::kType, event::kCounter)
                                                                  .varint(event::kTrackUuid, uuid)
                                                                  .float64(event::kDoubleCounterValue, sample.value));
        ++stats.counterSamples;
      }
      continue;
    }
    TrackSliceWriter slices(packets, uuid, clockHz, stats);
    reader.forEachSlice(t.id, [&](const traces::SliceRow& s) { slices.add(s); });
    slices.finish();
  }
  return stats;
}

}  // namespace ipusim::profiler::analysis
