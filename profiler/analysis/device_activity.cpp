#include "profiler/analysis/device_activity.hpp"

#include "profiler/analysis/checked_sum.hpp"
#include "profiler/analysis/slice_walk.hpp"
#include "traces/profile_error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <unordered_map>

namespace ipusim::profiler::analysis {

PhaseCycles& PhaseCycles::operator+=(const PhaseCycles& o) {
  compute += o.compute;
  exchange += o.exchange;
  ipuLink += o.ipuLink;
  collective += o.collective;
  sync += o.sync;
  streamCopy += o.streamCopy;
  streamingMemory += o.streamingMemory;
  idle += o.idle;
  return *this;
}

PhaseCycles DeviceActivity::allIpus() const {
  PhaseCycles sum;
  for (const auto& p : perIpu) sum += p;
  return sum;
}

double DeviceActivity::fraction(std::int64_t PhaseCycles::*bucket) const {
  const PhaseCycles sum = allIpus();
  const std::int64_t total = sum.total();
  return total > 0 ? double(sum.*bucket) / double(total) : 0.0;
}

double DeviceActivity::hostWaitFraction() const {
  return windowCycles > 0 ? double(hostWaitCycles) / double(windowCycles) : 0.0;
}

double DeviceActivity::idleShare(std::size_t ipu) const {
  if (ipu >= perIpu.size()) return 0.0;
  const std::int64_t device = windowCycles - perIpu[ipu].streamCopy;
  return device > 0 ? double(perIpu[ipu].idle) / double(device) : 0.0;
}

double DeviceActivity::overlapFraction() const {
  return hostTransferCycles > 0 ? double(transferOverlapCycles) / double(hostTransferCycles) : 0.0;
}

double DeviceActivity::hostIoOverlapFraction() const {
  return hostIoCycles > 0 ? double(hostIoOverlapCycles) / double(hostIoCycles) : 0.0;
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The per-IPU buckets, in attribution priority order.
struct IpuSets {
  IntervalSet compute, exchange, ipuLink, collective, sync, streamCopy, streamingMemory;
};

}  // namespace

StreamDirections readStreamDirections(const traces::ProfileReader& reader) {
  StreamDirections result;
  const std::string text = reader.metaValue("stream_directions");
  if (text.empty()) return result;
  // The reader checked the value on open (profile_rules.json's rule for
  // stream_directions): a JSON object of "HostToDevice" and "DeviceToHost".
  const auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) throw std::logic_error("meta stream_directions was not checked on open");
  for (const auto& [name, value] : parsed.items()) {
    if (value == "HostToDevice") result[name] = StreamDirection::HostToDevice;
    else if (value == "DeviceToHost") result[name] = StreamDirection::DeviceToHost;
    else throw std::logic_error("meta stream_directions was not checked on open");
  }
  return result;
}

StreamDirection streamDirection(const std::string& streamName, const StreamDirections& declared,
                                const std::string& profile) {
  if (auto it = declared.find(streamName); it != declared.end()) return it->second;
  // ipusim declares every stream it copies: one left out of a profile's
  // declaration (its entry deleted, a copy's name changed) was guessed from
  // its name, and a "loss" outfeed counted as bytes to the device.
  if (!declared.empty())
    throw traces::ProfileError(profile + ": meta 'stream_directions' gives no direction for stream '" + streamName +
                               "', which a StreamCopy slice copies: expected every copied stream's direction "
                               "(\"HostToDevice\" or \"DeviceToHost\"), as ipusim writes it");
  const std::string name = lower(streamName);
  for (const char* marker : {"outfeed", "d2h", "to_host", "device_to_host"})
    if (name.find(marker) != std::string::npos) return StreamDirection::DeviceToHost;
  return StreamDirection::HostToDevice;
}

IntervalSet capturedRunWindows(const std::vector<traces::RunRow>& runs) {
  IntervalSet windows;
  for (const auto& run : runs)
    if (run.captured) windows.add(run.startCycle, run.endCycle);
  return windows;
}

DeviceActivity measureDeviceActivity(const traces::ProfileReader& reader, const IntervalSet& windows,
                                     std::int64_t numIpus) {
  DeviceActivity activity;
  activity.windowCycles = windows.length();
  const auto tracks = reader.tracks();
  // The IPUs held: from the first IPU with a BSP track (an instance's profile
  // holds its replicas' IPUs only) to the last, at least numIpus of them.
  std::int64_t first = -1, last = -1;
  for (const auto& track : tracks)
    if (track.kind == "bsp" && track.ipu >= 0) {
      first = first < 0 ? track.ipu : std::min(first, track.ipu);
      last = std::max(last, track.ipu);
    }
  activity.firstIpu = std::max<std::int64_t>(first, 0);
  numIpus = std::max<std::int64_t>({numIpus, last + 1 - activity.firstIpu, 1});
  const auto held = [&](std::int64_t ipu) { return ipu >= activity.firstIpu && ipu - activity.firstIpu < numIpus; };

  std::vector<IpuSets> ipus(static_cast<std::size_t>(numIpus));
  IntervalSet deviceWideCopies, hostWait, hostTransfer, hostIo;
  const StreamDirections declared = readStreamDirections(reader);
  if (windows.empty()) {
    activity.perIpu.assign(ipus.size(), PhaseCycles{});
    return activity;
  }
  const std::int64_t from = windows.intervals().front().begin;
  const std::int64_t to = windows.intervals().back().end;
  const auto inRange = [&](const traces::SliceRow& s) { return s.ts < to && s.ts + s.dur > from; };
  const auto startsInWindows = [&](std::int64_t ts) {
    const auto& w = windows.intervals();
    auto it = std::upper_bound(w.begin(), w.end(), ts,
                               [](std::int64_t t, const Interval& i) { return t < i.begin; });
    return it != w.begin() && ts < std::prev(it)->end;
  };

  for (const auto& track : tracks) {
    if (track.kind == "bsp" && track.ipu >= 0) {
      IpuSets& sets = ipus[static_cast<std::size_t>(track.ipu - activity.firstIpu)];
      forEachSliceIn(reader, track.id, from, to, [&](const traces::SliceRow& s) {
        if (!inRange(s)) return;
        const std::int64_t end = s.ts + s.dur;
        if (s.category == "compute") sets.compute.add(s.ts, end);
        else if (s.category == "exchange") sets.exchange.add(s.ts, end);
        else if (s.category == "ipu_link") sets.ipuLink.add(s.ts, end);
        else if (s.category == "collective") sets.collective.add(s.ts, end);
        else if (s.category == "sync") sets.sync.add(s.ts, end);
        else if (s.category == "streaming_memory") sets.streamingMemory.add(s.ts, end);
        else if (startsWith(s.category, "stream_copy")) sets.streamCopy.add(s.ts, end);
        if (s.category == "stream_copy_begin") hostWait.add(s.ts, end);
        if (s.category == "stream_copy_mid") hostTransfer.add(s.ts, end);
      });
    } else if (track.kind == "host") {
      forEachSliceIn(reader, track.id, from, to, [&](const traces::SliceRow& s) {
        if (inRange(s) && s.category == "host_io") hostIo.add(s.ts, s.ts + s.dur);
      });
    } else if (track.kind == "stream") {
      // A Mid slice's stream is named by its parent StreamCopy slice
      // ("StreamCopy <stream>", written before its phases); else by the track.
      std::unordered_map<std::int64_t, std::string> streamOfCopy;
      IntervalSet& copies = track.ipu >= 0 && held(track.ipu)
                                ? ipus[static_cast<std::size_t>(track.ipu - activity.firstIpu)].streamCopy
                                : deviceWideCopies;
      forEachSliceIn(reader, track.id, from, to, [&](const traces::SliceRow& s) {
        if (!inRange(s) || !startsWith(s.category, "stream_copy")) return;
        const std::int64_t end = s.ts + s.dur;
        copies.add(s.ts, end);
        if (s.category == "stream_copy") streamOfCopy[s.id] = streamNameOf(s.name);
        if (s.category == "stream_copy_begin") hostWait.add(s.ts, end);
        if (s.category == "stream_copy_mid") {
          hostTransfer.add(s.ts, end);
          if (s.bytes <= 0 || !startsInWindows(s.ts)) return;
          const auto parent = streamOfCopy.find(s.parentId);
          const std::string& stream = parent != streamOfCopy.end() ? parent->second : track.name;
          addChecked(streamDirection(stream, declared, reader.path()) == StreamDirection::DeviceToHost
                         ? activity.bytesToHost
                         : activity.bytesToDevice,
                     s.bytes, reader.path(), "slices.bytes");
        }
      });
    }
  }

  // Both directions together (RangeStats::hostLinkBytes) fit too.
  std::int64_t hostLinkBytes = activity.bytesToDevice;
  addChecked(hostLinkBytes, activity.bytesToHost, reader.path(), "slices.bytes");

  IntervalSet anyCompute, anyActive;
  for (auto& sets : ipus) {
    sets.streamCopy.add(deviceWideCopies);
    // Exclusive attribution: each bucket keeps only what higher-priority
    // buckets left.
    IntervalSet taken = sets.compute.intersect(windows);
    anyCompute.add(taken);
    PhaseCycles cycles;
    cycles.compute = taken.length();
    const auto claim = [&](const IntervalSet& set) {
      IntervalSet mine = set.intersect(windows).subtract(taken);
      taken.add(mine);
      return mine.length();
    };
    cycles.exchange = claim(sets.exchange);
    cycles.ipuLink = claim(sets.ipuLink);
    cycles.collective = claim(sets.collective);
    cycles.sync = claim(sets.sync);
    cycles.streamCopy = claim(sets.streamCopy);
    cycles.streamingMemory = claim(sets.streamingMemory);
    cycles.idle = activity.windowCycles - taken.length();
    anyActive.add(taken);
    activity.perIpu.push_back(cycles);
  }
  const IntervalSet transfer = hostTransfer.intersect(windows);
  activity.hostWaitCycles = hostWait.intersect(windows).length();
  activity.hostTransferCycles = transfer.length();
  activity.transferOverlapCycles = transfer.intersect(anyCompute).length();
  const IntervalSet io = hostIo.intersect(windows);
  activity.hostIoCycles = io.length();
  activity.hostIoOverlapCycles = io.intersect(anyActive).length();
  return activity;
}

}  // namespace ipusim::profiler::analysis
