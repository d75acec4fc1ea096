#include "profiler/analysis/chrome_trace.hpp"

#include "profiler/analysis/chrome_trace_layout.hpp"
#include "profiler/analysis/chrome_trace_time.hpp"
#include "profiler/analysis/profile_target.hpp"

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace ipusim::profiler::analysis {

namespace {

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
  // A time beyond the JSON trace's 64-bit units names the file (Perfetto's
  // .pftrace, in nanoseconds, holds 2^12 times later ones).
  auto timeOf = [&](std::int64_t cycles) {
    try {
      return cyclesToTraceUnits(cycles, clockHz) + kChromeTraceOffsetUnits;
    } catch (const std::range_error& e) {
      throw traces::ProfileError(reader.path() + ": " + e.what() + " (export it as .pftrace instead)");
    }
  };

  nlohmann::json otherData(reader.meta());
  otherData["source"] = reader.path();
  otherData["ts_offset_us"] = kChromeTraceOffsetUnits / kTraceUnitsPerMicrosecond;
  otherData["ts_units_per_us"] = kTraceUnitsPerMicrosecond;
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":" << dumpJson(otherData) << ",\"traceEvents\":[";
  EventWriter events(out);

  // Processes: the host one, then one per IPU that has a track (bounded by
  // the tracks, not by the largest IPU index a damaged file may hold).
  std::set<std::int64_t> processes{kHostProcess};
  for (const auto& track : tracks) processes.insert(processOf(track));
  for (const std::int64_t process : processes) {
    writeMetadata(events, "process_name", process, 0, {{"name", processName(process)}});
    writeMetadata(events, "process_sort_index", process, 0, {{"sort_index", process - 1}});
  }

  for (const auto& track : tracks) {
    const std::int64_t pid = processOf(track);
    ++stats.tracks;
    if (track.kind == "counter") {
      for (const auto& sample : reader.counters(track.id)) {
        events.next() << "{\"name\":" << quoted(track.name) << ",\"ph\":\"C\",\"pid\":" << pid
                      << ",\"ts\":" << traceUnitsAsMicroseconds(timeOf(sample.ts))
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
      const std::int64_t begin = timeOf(s.ts);
      const std::int64_t end = timeOf(s.ts + s.dur);
      std::ostream& o = events.next();
      o << "{\"name\":" << cachedQuote(s.name) << ",\"cat\":" << cachedQuote(s.category) << threadIds
        << ",\"ts\":" << traceUnitsAsMicroseconds(begin);
      if (end > begin) {
        o << ",\"ph\":\"X\",\"dur\":" << traceUnitsAsMicroseconds(end - begin) << "}";
        ++stats.slices;
      } else {
        o << ",\"ph\":\"I\",\"s\":\"t\"}";
        ++stats.instants;
      }
    });
  }
  out << "\n]}\n";
  return stats;
}

}  // namespace ipusim::profiler::analysis
