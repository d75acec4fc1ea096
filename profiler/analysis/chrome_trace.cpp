#include "profiler/analysis/chrome_trace.hpp"

#include "profiler/analysis/profile_target.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace ipusim::profiler::analysis {

std::int64_t cyclesToPicoseconds(std::int64_t cycles, double clockHz) {
  const double ps = double(cycles) * (1e12 / clockHz);
  // 9.2e18 ps is 106 days: beyond it (a huge duration, a tiny clock_hz) the
  // value does not fit the trace's integer picoseconds.
  if (!(std::fabs(ps) < 9.2e18))
    throw std::range_error(std::to_string(cycles) + " cycles at clock_hz " + std::to_string(clockHz) +
                           " do not fit the trace's 64-bit picoseconds");
  return std::llround(ps);
}

namespace {

constexpr std::int64_t kHostPid = 1;
std::int64_t pidOf(const traces::TrackRow& track) { return track.ipu >= 0 ? track.ipu + 2 : kHostPid; }

// Picoseconds as microseconds with 6 exact decimals ("12.000750").
std::string micros(std::int64_t ps) {
  char buffer[48];
  const char* sign = ps < 0 ? "-" : "";
  // Unsigned: the magnitude of INT64_MIN does not fit int64.
  const std::uint64_t magnitude = ps < 0 ? 0 - static_cast<std::uint64_t>(ps) : static_cast<std::uint64_t>(ps);
  std::snprintf(buffer, sizeof buffer, "%s%llu.%06llu", sign, static_cast<unsigned long long>(magnitude / 1000000),
                static_cast<unsigned long long>(magnitude % 1000000));
  return buffer;
}

// Names come from the profile: bytes that are not UTF-8 are replaced (U+FFFD),
// not a reason to fail the export.
std::string dumpJson(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }
std::string quoted(const std::string& text) { return dumpJson(nlohmann::json(text)); }

// Slice names and categories repeat (a compute set runs every step): escape
// each distinct one once. Bounded, so a profile of unique names cannot grow it.
class QuotedCache {
 public:
  const std::string& operator()(const std::string& text) {
    auto it = cache_.find(text);
    if (it != cache_.end()) return it->second;
    if (cache_.size() >= kMaxEntries) cache_.clear();
    return cache_.emplace(text, quoted(text)).first->second;
  }

 private:
  static constexpr std::size_t kMaxEntries = 1 << 16;
  std::unordered_map<std::string, std::string> cache_;
};

class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) {}
  // Starts the next event: the separator, then the caller writes one object.
  std::ostream& next() {
    out_ << (first_ ? "\n" : ",\n");
    first_ = false;
    return out_;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

void writeMetadata(EventWriter& events, const char* what, std::int64_t pid, std::int64_t tid,
                   const nlohmann::json& args) {
  events.next() << "{\"name\":\"" << what << "\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
                << ",\"args\":" << dumpJson(args) << "}";
}

}  // namespace

ChromeTraceStats writeChromeTrace(const traces::ProfileReader& reader, std::ostream& out) {
  const ProfileTarget target = readProfileTarget(reader);
  const double clockHz = target.requireClockHz();
  const auto tracks = reader.tracks();
  ChromeTraceStats stats;

  nlohmann::json otherData(reader.meta());
  otherData["source"] = reader.path();
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":" << dumpJson(otherData) << ",\"traceEvents\":[";
  EventWriter events(out);

  // Processes: the host one, then one per IPU that has a track (bounded by
  // the tracks, not by the largest IPU index a damaged file may hold).
  writeMetadata(events, "process_name", kHostPid, 0, {{"name", "Host and engine"}});
  writeMetadata(events, "process_sort_index", kHostPid, 0, {{"sort_index", 0}});
  std::set<std::int64_t> ipus;
  for (const auto& track : tracks)
    if (track.ipu >= 0) ipus.insert(track.ipu);
  for (const std::int64_t ipu : ipus) {
    writeMetadata(events, "process_name", ipu + 2, 0, {{"name", "IPU " + std::to_string(ipu)}});
    writeMetadata(events, "process_sort_index", ipu + 2, 0, {{"sort_index", ipu + 1}});
  }

  for (const auto& track : tracks) {
    const std::int64_t pid = pidOf(track);
    ++stats.tracks;
    if (track.kind == "counter") {
      for (const auto& sample : reader.counters(track.id)) {
        events.next() << "{\"name\":" << quoted(track.name) << ",\"ph\":\"C\",\"pid\":" << pid
                      << ",\"ts\":" << micros(cyclesToPicoseconds(sample.ts, clockHz))
                      << ",\"args\":" << dumpJson(nlohmann::json{{track.name, sample.value}}) << "}";
        ++stats.counterSamples;
      }
      continue;
    }
    writeMetadata(events, "thread_name", pid, track.id, {{"name", track.name}});
    writeMetadata(events, "thread_sort_index", pid, track.id, {{"sort_index", track.sortOrder}});
    const std::string threadIds = ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(track.id);
    QuotedCache cachedQuote;
    reader.forEachSlice(track.id, [&](const traces::SliceRow& s) {
      const std::int64_t begin = cyclesToPicoseconds(s.ts, clockHz);
      const std::int64_t end = cyclesToPicoseconds(s.ts + s.dur, clockHz);
      std::ostream& o = events.next();
      o << "{\"name\":" << cachedQuote(s.name) << ",\"cat\":" << cachedQuote(s.category) << ",\"ph\":\"X\""
        << threadIds << ",\"ts\":" << micros(begin) << ",\"dur\":" << micros(end - begin)
        << ",\"args\":{\"ts_cycles\":" << s.ts << ",\"dur_cycles\":" << s.dur;
      if (s.runId >= 0) o << ",\"run\":" << s.runId;
      if (s.programId >= 0) o << ",\"program\":" << s.programId;
      if (s.phaseId >= 0) o << ",\"phase\":" << s.phaseId;
      if (s.bytes >= 0) o << ",\"bytes\":" << s.bytes;
      o << "}}";
      ++stats.slices;
    });
  }
  out << "\n]}\n";
  return stats;
}

}  // namespace ipusim::profiler::analysis
