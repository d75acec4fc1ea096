#include "profiler/analysis/range_stats.hpp"

#include "traces/profile_reader.hpp"

#include <sqlite3.h>

#include <algorithm>
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

// Slices overlapping [?1, ?2), clipped: begin, end.
const char* const kClipped =
    "MAX(s.ts, ?1) AS b, MIN(s.ts + s.dur, ?2) AS e FROM slices s JOIN tracks t ON t.id = s.track_id "
    "WHERE s.ts < ?2 AND s.ts + s.dur > ?1 ";

std::vector<Interval> intervals(Query& q) {
  std::vector<Interval> out;
  while (q.step()) out.push_back({q.integer(0), q.integer(1)});
  return out;
}

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

  std::vector<std::int64_t> ipus;
  {
    Query q(db, "SELECT DISTINCT ipu FROM tracks WHERE kind = 'bsp' AND ipu IS NOT NULL ORDER BY ipu",
            file);
    while (q.step()) ipus.push_back(q.integer(0));
  }
  std::int64_t tilesPerIpu = 0;
  try {
    tilesPerIpu = std::stoll(reader.metaValue("tiles_per_ipu", "0"));
  } catch (const std::exception&) {
    tilesPerIpu = 0;
  }

  Query sums(db,
             "SELECT s.category, SUM(MIN(s.ts + s.dur, ?2) - MAX(s.ts, ?1)) FROM slices s "
             "JOIN tracks t ON t.id = s.track_id WHERE t.kind = 'bsp' AND t.ipu = ?3 "
             "AND s.ts < ?2 AND s.ts + s.dur > ?1 GROUP BY s.category",
             file);
  Query busy(db,
             std::string("SELECT ") + kClipped +
                 "AND ((t.kind = 'bsp' AND t.ipu = ?3) OR (t.kind = 'stream' AND "
                 "(t.ipu = ?3 OR t.ipu IS NULL OR t.ipu < 0) AND s.category LIKE 'stream_copy%'))",
             file);
  Query copies(db,
               std::string("SELECT ") + kClipped +
                   "AND t.kind = 'stream' AND (t.ipu = ?3 OR t.ipu IS NULL OR t.ipu < 0) "
                   "AND s.category LIKE 'stream_copy%'",
               file);
  Query phases(db,
               "SELECT s.phase_id, SUM((MIN(s.ts + s.dur, ?2) - MAX(s.ts, ?1)) * 1.0 / s.dur) "
               "FROM slices s JOIN tracks t ON t.id = s.track_id WHERE t.kind = 'bsp' AND t.ipu = ?3 "
               "AND s.category = 'compute' AND s.phase_id IS NOT NULL AND s.dur > 0 "
               "AND s.ts < ?2 AND s.ts + s.dur > ?1 GROUP BY s.phase_id",
               file);
  Query tiles(db,
              "SELECT SUM(cycles), MAX(cycles), SUM(cycles > 0) FROM tile_phase_cycles "
              "WHERE phase_id = ?1 AND ipu = ?2",
              file);

  for (std::int64_t ipu : ipus) {
    IpuRangeStats s;
    s.ipu = ipu;
    sums.reset();
    sums.bind(1, from).bind(2, to).bind(3, ipu);
    while (sums.step()) {
      const std::string category = sums.text(0);
      const std::int64_t cycles = sums.integer(1);
      if (category == "compute") s.compute = cycles;
      else if (category == "exchange") s.exchange = cycles;
      else if (category == "sync") s.sync = cycles;
    }
    copies.reset();
    copies.bind(1, from).bind(2, to).bind(3, ipu);
    s.streamCopy = totalLength(unionOf(intervals(copies)));
    busy.reset();
    busy.bind(1, from).bind(2, to).bind(3, ipu);
    s.idle = stats.cycles - totalLength(unionOf(intervals(busy)));

    double work = 0, balanceDenominator = 0, efficiencyDenominator = 0;
    phases.reset();
    phases.bind(1, from).bind(2, to).bind(3, ipu);
    while (phases.step()) {
      const std::int64_t phase = phases.integer(0);
      const double weight = phases.real(1);
      tiles.reset();
      tiles.bind(1, phase).bind(2, ipu);
      if (!tiles.step() || tiles.isNull(0)) continue;
      s.hasTileDetail = true;
      const double maxCycles = double(tiles.integer(1));
      work += weight * double(tiles.integer(0));
      balanceDenominator += weight * maxCycles * double(tiles.integer(2));
      efficiencyDenominator += weight * maxCycles * double(tilesPerIpu);
    }
    if (balanceDenominator > 0) s.tileBalance = work / balanceDenominator;
    if (efficiencyDenominator > 0) s.parallelEfficiency = work / efficiencyDenominator;
    stats.ipus.push_back(s);
  }

  {
    Query q(db,
            "SELECT t.name, SUM(s.bytes) FROM slices s JOIN tracks t ON t.id = s.track_id "
            "WHERE s.category = 'stream_copy_mid' AND s.bytes > 0 AND s.ts >= ?1 AND s.ts < ?2 "
            "GROUP BY t.name",
            file);
    q.bind(1, from).bind(2, to);
    while (q.step()) {
      stats.bytesByStream[q.text(0)] += q.integer(1);
      stats.hostLinkBytes += q.integer(1);
    }
  }
  {
    Query io(db,
             std::string("SELECT ") + kClipped +
                 "AND ((t.kind = 'stream' AND s.category = 'stream_copy_mid') OR t.kind = 'host')",
             file);
    io.bind(1, from).bind(2, to);
    Query compute(db, std::string("SELECT ") + kClipped + "AND t.kind = 'bsp' AND s.category = 'compute'",
                  file);
    compute.bind(1, from).bind(2, to);
    const auto ioUnion = unionOf(intervals(io));
    stats.ioCycles = totalLength(ioUnion);
    stats.computeIoOverlapCycles = intersectionLength(ioUnion, unionOf(intervals(compute)));
  }
  return stats;
}

}  // namespace ipusim::profiler
