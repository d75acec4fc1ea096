#include "profiler/analysis/range_stats.hpp"

#include "profiler/analysis/host_wait.hpp"

#include "profiler/analysis/checked_sum.hpp"
#include "profiler/analysis/slice_walk.hpp"
#include "profiler/analysis/device_activity.hpp"
#include "profiler/analysis/profile_target.hpp"
#include "traces/profile_reader.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace ipusim::profiler {

namespace {

// A prepared statement that finalizes itself; errors name the profile.
class Query {
 public:
  Query(sqlite3* db, const std::string& sql, const std::string& file) : file_(file) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      throw traces::ProfileError(file + ": range statistics: " + sqlite3_errmsg(db));
  }
  ~Query() { sqlite3_finalize(stmt_); }
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  Query& bind(int index, std::int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
  }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw traces::ProfileError(file_ + ": range statistics: " +
                               sqlite3_errmsg(sqlite3_db_handle(stmt_)));
  }
  void reset() { sqlite3_reset(stmt_); }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  bool isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string text(int column) const {
    const auto* p = sqlite3_column_text(stmt_, column);
    return p ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  std::string file_;
};

}  // namespace

std::vector<Interval> unionOf(std::vector<Interval> in) {
  std::sort(in.begin(), in.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> out;
  for (const Interval& i : in) {
    if (i.end <= i.begin) continue;
    if (!out.empty() && i.begin <= out.back().end) out.back().end = std::max(out.back().end, i.end);
    else out.push_back(i);
  }
  return out;
}

std::int64_t totalLength(const std::vector<Interval>& disjoint) {
  std::int64_t total = 0;
  for (const Interval& i : disjoint) total += i.end - i.begin;
  return total;
}

std::int64_t intersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].begin, b[j].begin);
    const std::int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    if (a[i].end < b[j].end) ++i;
    else ++j;
  }
  return total;
}

RangeStats computeRangeStats(const traces::ProfileReader& reader, std::int64_t from,
                             std::int64_t to) {
  if (to < from)
    throw std::invalid_argument("range statistics: range end " + std::to_string(to) +
                                " is before its start " + std::to_string(from));
  sqlite3* db = reader.db();
  const std::string& file = reader.path();
  RangeStats stats;
  stats.from = from;
  stats.to = to;
  stats.cycles = to - from;

  // The shared definitions, over the one window.
  analysis::IntervalSet window;
  window.add(from, to);
  const auto tracks = reader.tracks();
  std::vector<std::int64_t> ipus;
  for (const auto& t : tracks)
    if (t.kind == "bsp" && t.ipu >= 0) ipus.push_back(t.ipu);
  std::sort(ipus.begin(), ipus.end());
  ipus.erase(std::unique(ipus.begin(), ipus.end()), ipus.end());
  const auto activity = analysis::measureDeviceActivity(reader, window, 0);
  stats.hostWaitCycles = activity.hostWaitCycles;
  stats.ipuWaitingForHostCycles = analysis::ipuWaitingForHost(reader, window).waitingCycles;
  stats.hostTransferCycles = activity.hostTransferCycles;
  stats.transferOverlapCycles = activity.transferOverlapCycles;
  stats.bytesToDevice = activity.bytesToDevice;
  stats.bytesToHost = activity.bytesToHost;

  // Bytes per stream, named and directed as the shared code does.
  const auto directions = analysis::readStreamDirections(reader);
  for (const auto& track : tracks) {
    if (track.kind != "stream") continue;
    std::map<std::int64_t, std::string> streamOfCopy;  // StreamCopy slice id -> stream
    forEachSliceIn(reader, track.id, from, to, [&](const traces::SliceRow& s) {
      if (s.category == "stream_copy") streamOfCopy[s.id] = streamNameOf(s.name);
      if (s.category != "stream_copy_mid" || s.bytes <= 0 || s.ts < from || s.ts >= to) return;
      const auto parent = streamOfCopy.find(s.parentId);
      const std::string stream = parent != streamOfCopy.end() ? parent->second : track.name;
      StreamBytes& entry = stats.bytesByStream[stream];
      analysis::addChecked(entry.bytes, s.bytes, reader.path(), "slices.bytes");
      entry.toHost =
          analysis::streamDirection(stream, directions, reader.path()) == analysis::StreamDirection::DeviceToHost;
    });
  }

  // Bounded as every reader bounds it (profile_rules.json); 0 when absent.
  const std::int64_t tilesPerIpu = analysis::readProfileTarget(reader).tilesPerIpu;
  // TOTAL, a double: the figures made of these are ratios, and SQLite's
  // integer SUM of 1,472 tiles' cycles, each within the rules (2^62), failed
  // with "integer overflow".
  Query tiles(db,
              "SELECT TOTAL(cycles), MAX(cycles), TOTAL(cycles > 0) FROM tile_phase_cycles "
              "WHERE phase_id = ?1 AND ipu = ?2",
              file);
  for (std::int64_t ipu : ipus) {
    IpuRangeStats s;
    s.ipu = ipu;
    const std::int64_t index = ipu - activity.firstIpu;  // (perIpu starts at the profile's first IPU)
    if (index >= 0 && static_cast<std::size_t>(index) < activity.perIpu.size()) {
      const auto& p = activity.perIpu[static_cast<std::size_t>(index)];
      s.compute = p.compute;
      s.exchange = p.exchange;
      s.ipuLink = p.ipuLink;
      s.collective = p.collective;
      s.sync = p.sync;
      s.streamCopy = p.streamCopy;
      s.streamingMemory = p.streamingMemory;
      s.idle = p.idle;
    } else {
      s.idle = stats.cycles;
    }
    double work = 0, balanceDenominator = 0, efficiencyDenominator = 0;
    // Per compute phase in range: the fraction of its executions inside it.
    std::map<std::int64_t, double> phaseWeight;
    for (const auto& track : tracks) {
      if (track.kind != "bsp" || track.ipu != ipu) continue;
      forEachSliceIn(reader, track.id, from, to, [&](const traces::SliceRow& slice) {
        if (slice.category != "compute" || slice.phaseId < 0 || slice.dur <= 0) return;
        const std::int64_t inside = std::min(slice.ts + slice.dur, to) - std::max(slice.ts, from);
        if (inside > 0) phaseWeight[slice.phaseId] += double(inside) / double(slice.dur);
      });
    }
    for (const auto& [phase, weight] : phaseWeight) {
      tiles.reset();
      tiles.bind(1, phase).bind(2, ipu);
      if (!tiles.step() || tiles.isNull(1)) continue;  // MAX is NULL when the phase has no tile rows
      s.hasTileDetail = true;
      const double maxCycles = double(tiles.integer(1));
      work += weight * tiles.real(0);
      balanceDenominator += weight * maxCycles * tiles.real(2);
      efficiencyDenominator += weight * maxCycles * double(tilesPerIpu);
    }
    if (balanceDenominator > 0) s.tileBalance = work / balanceDenominator;
    if (efficiencyDenominator > 0) s.parallelEfficiency = work / efficiencyDenominator;
    stats.ipus.push_back(s);
  }
  return stats;
}

}  // namespace ipusim::profiler
