#include "traces/profile_reader.hpp"

#include "traces/counter_value.hpp"
#include "traces/internal/counter_summary_rows.hpp"
#include "traces/internal/little_endian_blobs.hpp"
#include "traces/internal/slice_chunk_codec.hpp"
#include "traces/internal/sqlite_statement.hpp"
#include "traces/profile_rules.hpp"
#include "traces/profile_verification.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace fs = std::filesystem;

namespace ipusim::traces {

using internal::Statement;

namespace {

constexpr const char* kReportFileName = "profile.pop";

constexpr const char* kSliceColumns =
    "id, track_id, run_id, ts, dur, name, category, depth, parent_id, program_id, phase_id, bytes";

// Values a damaged or hostile file may hold are refused where they are read
// too (check 6 runs on open, but a reader that defers it, the viewer, reads
// rows before it ends), so that no analysis loops over 2e9 IPUs or
// overflows a sum of durations. The bounds are profile_rules.json's.
std::string idKey(std::int64_t id) { return "id = " + std::to_string(id); }

std::string key(const char* a, std::int64_t x, const char* b, std::int64_t y) {
  return std::string(a) + " = " + std::to_string(x) + ", " + b + " = " + std::to_string(y);
}

void checkSlice(const std::string& file, const SliceRow& row) {
  static const ColumnRule& ts = columnRule("slices", "ts");
  static const ColumnRule& dur = columnRule("slices", "dur");
  static const ColumnRule& bytes = columnRule("slices", "bytes");
  requireValue(file, ts, idKey(row.id), row.ts);
  requireValue(file, dur, idKey(row.id), row.dur);
  requireValue(file, bytes, idKey(row.id), row.bytes);
}

// A slice of the packed copy against the rules of the slices it copies (its
// bytes are a blob that check 6 cannot see into): a depth of 2^40 or a
// negative start would otherwise be drawn.
void checkPackedSlice(const std::string& file, std::int64_t trackId, const PackedSlices& chunk, std::size_t i) {
  static const ColumnRule& ts = columnRule("slices", "ts");
  static const ColumnRule& dur = columnRule("slices", "dur");
  static const ColumnRule& depth = columnRule("slices", "depth");
  for (const auto& [rule, value] : {std::pair<const ColumnRule*, std::int64_t>{&ts, chunk.ts[i]}, {&dur, chunk.dur[i]},
                                    {&depth, std::int64_t(chunk.depth[i])}})
    if (value < rule->min || value > rule->max)
      throw ProfileError(file + ": corrupt slice_chunks of track " + std::to_string(trackId) + ": slice " +
                         std::to_string(chunk.id[i]) + " has " + rule->column + " " + std::to_string(value) +
                         "; expected " + describeExpectation(*rule));
}

SliceRow readSlice(const Statement& s) {
  SliceRow row;
  row.id = s.columnInt(0);
  row.trackId = s.columnInt(1);
  row.runId = s.columnOptionalInt(2);
  row.ts = s.columnInt(3);
  row.dur = s.columnInt(4);
  row.name = s.columnText(5);
  row.category = s.columnText(6);
  row.depth = s.columnInt(7);
  row.parentId = s.columnOptionalInt(8);
  row.programId = s.columnOptionalInt(9);
  row.phaseId = s.columnOptionalInt(10);
  row.bytes = s.columnOptionalInt(11);
  return row;
}

// A report directory of `mpirun ipusim run` holds a profile per rank
// (profile.rankK.pop) and no profile.pop: "has no profile.pop" alone did not
// say which file to name. The hint ("" when there is none) names them.
std::string rankProfilesHint(const std::string& dir) {
  std::vector<std::uint64_t> ranks;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string prefix = "profile.rank", suffix = ".pop";
    if (name.size() <= prefix.size() + suffix.size() || name.size() > prefix.size() + suffix.size() + 9 ||
        name.compare(0, prefix.size(), prefix) != 0 || name.compare(name.size() - suffix.size(), suffix.size(), suffix))
      continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
      ranks.push_back(std::stoull(digits));
  }
  if (ranks.empty()) return "";
  std::sort(ranks.begin(), ranks.end());
  const auto file = [](std::uint64_t rank) { return "profile.rank" + std::to_string(rank) + ".pop"; };
  return "; it holds " + std::to_string(ranks.size()) + (ranks.size() == 1 ? " rank's profile" : " ranks' profiles") +
         " of an mpirun run (" + file(ranks.front()) + (ranks.size() == 1 ? "" : " to " + file(ranks.back())) +
         "): name one (its rank's IPUs), e.g. " + (fs::path(dir) / file(ranks.front())).string() +
         ", or combine them with `ipusim combine " + dir + " -o FILE`";
}

// A profile path may name the file or the report directory holding it. The
// file must be a regular file: SQLite's open of a FIFO with no writer blocks
// forever, and a device is no profile. Checked by stat(2), before any open.
std::string resolveProfilePath(const std::string& path) {
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    file = (fs::path(path) / kReportFileName).string();
    if (!fs::exists(fs::symlink_status(file, ec)))
      throw ProfileError(path + ": report directory has no " + kReportFileName + rankProfilesHint(path));
  } else if (!fs::exists(fs::symlink_status(path, ec))) {
    throw ProfileError(path + ": no such profile file");
  }
  const fs::file_status status = fs::status(file, ec);
  if (ec) throw ProfileError(file + ": cannot inspect it: " + ec.message());
  if (fs::is_directory(status)) throw ProfileError(file + ": is a directory, expected a profile file");
  if (fs::is_fifo(status)) throw ProfileError(file + ": is a FIFO, expected a regular profile file");
  if (fs::is_character_file(status) || fs::is_block_file(status))
    throw ProfileError(file + ": is a device, expected a regular profile file");
  if (!fs::is_regular_file(status)) throw ProfileError(file + ": is not a regular file, expected a profile file");
  return file;
}

// `path` as an SQLite URI that opens it immutable (see the constructor).
std::string immutableUri(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += char(c);
    } else {
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 15];
    }
  }
  return uri + "?immutable=1";
}

// Parses meta's schema_version: a whole positive decimal integer.
int parseSchemaVersion(const std::string& text, const std::string& file) {
  const bool digitsOnly = !text.empty() && text.size() < 10 &&
                          text.find_first_not_of("0123456789") == std::string::npos;
  const int version = digitsOnly ? std::stoi(text) : 0;
  if (version < 1)
    throw ProfileError(file + ": meta schema_version is '" + text +
                       "'; expected a positive integer");
  return version;
}

}  // namespace

struct ProfileReader::Impl {
  std::string path;
  sqlite3* db = nullptr;
  // Per track: how far before a window a slice not in longSlices may start
  // and still overlap it (the bounded look-back of slices()).
  std::unordered_map<std::int64_t, std::int64_t> lookBack;
  // Per track: its few slices longer than the look-back, ordered by ts, depth, id.
  std::unordered_map<std::int64_t, std::vector<SliceRow>> longSlices;
  Statement windowQuery;

  Statement prepare(const std::string& sql) const { return Statement(db, sql, path); }
  void checkIsCompleteProfile();
  void loadTrackStats();
  // Whether the profile has slice_chunks and slice_strings (newer writers).
  bool hasPackedCopy() const {
    Statement probe = prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('slice_chunks', 'slice_strings')");
    return probe.step() && probe.columnInt(0) == 2;
  }
};

void ProfileReader::Impl::checkIsCompleteProfile() {
  // The first read of the file: where "not SQLite" and "truncated" show.
  sqlite3_stmt* probe = nullptr;
  int rc = sqlite3_prepare_v2(
      db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'", -1, &probe,
      nullptr);
  bool hasMeta = false;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(probe);
    if (rc == SQLITE_ROW) {
      hasMeta = sqlite3_column_int64(probe, 0) > 0;
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(probe);
  if ((rc & 0xff) == SQLITE_NOTADB)
    throw ProfileError(path + ": not an SQLite database (" + sqlite3_errstr(rc) + ")");
  if ((rc & 0xff) == SQLITE_CORRUPT)
    throw ProfileError(path + ": corrupt or truncated profile (" + sqlite3_errstr(rc) + ")");
  if (rc != SQLITE_OK) internal::throwSqliteError(db, rc, path, "cannot read the profile");
  if (!hasMeta) {
    std::error_code ec;
    throw ProfileError(path + (fs::file_size(path, ec) == 0 ? ": empty file, not an ipusim profile"
                                                            : ": not an ipusim profile (the "
                                                              "database has no meta table)"));
  }

  Statement value = prepare("SELECT value FROM meta WHERE key = ?1");
  value.bindText(1, "schema_version");
  if (!value.step())
    throw ProfileError(path + ": not an ipusim profile (meta has no schema_version)");
  const int version = parseSchemaVersion(value.columnText(0), path);
  if (version > kSchemaVersion)
    throw ProfileError(path + ": schema version " + std::to_string(version) +
                       " is newer than this build supports (" + std::to_string(kSchemaVersion) +
                       "); open it with a newer ipusim");
  if (version < kSchemaVersion)
    throw ProfileError(path + ": schema version " + std::to_string(version) + " is older than this build reads (" +
                       std::to_string(kSchemaVersion) + "): write the profile again with this ipusim");

  // Only the schema's own view, and no trigger: a table replaced by a view
  // (of a recursive query, say) would hang or fool every reader.
  Statement foreign = prepare(
      "SELECT type, name FROM sqlite_master WHERE type = 'trigger' OR (type = 'view' AND name != 'tile_slices') LIMIT 1");
  if (foreign.step())
    throw ProfileError(path + ": not an ipusim profile: it holds the " + foreign.columnText(0) + " '" +
                       foreign.columnText(1) + "' (a profile has tables, indexes and the view tile_slices only)");
  // That view, when present, exactly as the writer makes it: another
  // definition (a recursive query) would hang or fool whoever reads
  // tile-level timelines from it.
  Statement view = prepare("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'tile_slices'");
  if (view.step() && view.columnText(0) != tileSlicesViewSql())
    throw ProfileError(path + ": not an ipusim profile: its view tile_slices is not defined as the schema defines it "
                       "(profile_rules.json tile_slices_view)");

  value.reset();
  value.bindText(1, "complete");
  const bool complete = value.step() && value.columnText(0) == "1";
  if (!complete)
    throw ProfileError(path + ": incomplete profile (meta has no complete=1): the run that "
                       "wrote it did not finish");
  // The meta keys the analyses read, against profile_rules.json (check 2).
  for (const MetaRule& rule : metaRules()) {
    value.reset();
    value.bindText(1, rule.key);
    if (value.step()) checkMetaText(path, rule, value.columnText(0));
  }
}

void ProfileReader::Impl::loadTrackStats() {
  Statement stats = prepare("SELECT track_id, look_back FROM slice_track_stats");
  while (stats.step()) lookBack[stats.columnInt(0)] = stats.columnInt(1);
  Statement longOnes = prepare(
      std::string("SELECT ") + kSliceColumns +
      " FROM slices WHERE id IN (SELECT slice_id FROM long_slices) ORDER BY track_id, ts, depth, id");
  while (longOnes.step()) {
    SliceRow row = readSlice(longOnes);
    checkSlice(path, row);
    longSlices[row.trackId].push_back(std::move(row));
  }
}

ProfileReader::ProfileReader(const std::string& path, Checks checks, const char* vfs) : impl_(std::make_unique<Impl>()) {
  impl_->path = resolveProfilePath(path);
  // Immutable (SQLite's URI parameter): read without locks and without a
  // journal or WAL, so reading a WAL-mode profile leaves no -wal or -shm
  // file, and a profile on a read-only filesystem opens. A profile is never
  // changed in place (the writer renames a complete file onto it), so
  // nothing is missed; a WAL file's frames beyond the database file are
  // ignored, and a profile that needed them fails the row-count check.
  const int rc = sqlite3_open_v2(immutableUri(impl_->path).c_str(), &impl_->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, vfs);
  if (rc != SQLITE_OK) {
    // The destructor does not run when the constructor throws: close here.
    const std::string cause = impl_->db ? sqlite3_errmsg(impl_->db) : sqlite3_errstr(rc);
    sqlite3_close_v2(impl_->db);
    impl_->db = nullptr;
    throw ProfileError(impl_->path + ": cannot open: " + cause);
  }
  try {
    impl_->checkIsCompleteProfile();
    verifyProfileIntegrity(impl_->db, impl_->path, checks == Checks::All);
    impl_->loadTrackStats();
    impl_->windowQuery = impl_->prepare(
        std::string("SELECT ") + kSliceColumns +
        " FROM slices WHERE track_id = ?1 AND ts >= ?2 AND ts < ?3"
        " AND (ts >= ?4 OR ts + dur > ?4) ORDER BY ts, depth, id");
  } catch (...) {
    impl_->windowQuery = Statement();
    sqlite3_close_v2(impl_->db);
    impl_->db = nullptr;
    throw;
  }
}

ProfileReader::~ProfileReader() {
  impl_->windowQuery = Statement();
  if (impl_->db) sqlite3_close_v2(impl_->db);
}

const std::string& ProfileReader::path() const { return impl_->path; }

std::map<std::string, std::string> ProfileReader::meta() const {
  std::map<std::string, std::string> result;
  Statement s = impl_->prepare("SELECT key, value FROM meta");
  while (s.step()) result.emplace(s.columnText(0), s.columnText(1));
  return result;
}

std::string ProfileReader::metaValue(const std::string& key, const std::string& fallback) const {
  Statement s = impl_->prepare("SELECT value FROM meta WHERE key = ?1");
  s.bindText(1, key);
  return s.step() ? s.columnText(0) : fallback;
}

std::vector<RunRow> ProfileReader::runs() const {
  std::vector<RunRow> result;
  Statement s = impl_->prepare(
      "SELECT id, entry_point, name, start_cycle, end_cycle, steps, captured FROM runs "
      "ORDER BY id");
  while (s.step()) {
    RunRow row;
    row.id = s.columnInt(0);
    row.entryPoint = s.columnInt(1);
    row.name = s.columnText(2);
    row.startCycle = s.columnInt(3);
    row.endCycle = s.columnInt(4);
    row.steps = s.columnInt(5);
    row.captured = s.columnInt(6) != 0;
    static const ColumnRule& start = columnRule("runs", "start_cycle");
    static const ColumnRule& end = columnRule("runs", "end_cycle");
    static const ColumnRule& steps = columnRule("runs", "steps");
    requireValue(impl_->path, start, idKey(row.id), row.startCycle);
    requireValue(impl_->path, end, idKey(row.id), row.endCycle, row.startCycle);
    requireValue(impl_->path, steps, idKey(row.id), row.steps);
    result.push_back(std::move(row));
  }
  return result;
}

std::vector<TrackRow> ProfileReader::tracks() const {
  std::vector<TrackRow> result;
  Statement s = impl_->prepare(
      "SELECT id, parent_id, kind, name, ipu, tile, sort_order FROM tracks ORDER BY id");
  while (s.step()) {
    TrackRow row;
    row.id = s.columnInt(0);
    row.parentId = s.columnOptionalInt(1);
    row.kind = s.columnText(2);
    row.name = s.columnText(3);
    row.ipu = s.columnOptionalInt(4);
    row.tile = s.columnOptionalInt(5);
    row.sortOrder = s.columnInt(6);
    static const ColumnRule& ipu = columnRule("tracks", "ipu");
    static const ColumnRule& tile = columnRule("tracks", "tile");
    requireValue(impl_->path, ipu, idKey(row.id), row.ipu);
    requireValue(impl_->path, tile, idKey(row.id), row.tile);
    result.push_back(std::move(row));
  }
  return result;
}

std::vector<ProgramRow> ProfileReader::programs() const {
  std::vector<ProgramRow> result;
  Statement s = impl_->prepare(
      "SELECT id, parent_id, kind, name, layer, op, ordinal FROM programs ORDER BY id");
  while (s.step()) {
    ProgramRow row;
    row.id = s.columnInt(0);
    row.parentId = s.columnOptionalInt(1);
    row.kind = s.columnText(2);
    row.name = s.columnText(3);
    row.layer = s.columnText(4);
    row.op = s.columnText(5);
    row.ordinal = s.columnInt(6);
    result.push_back(std::move(row));
  }
  return result;
}

std::vector<PhaseRow> ProfileReader::phases() const {
  std::vector<PhaseRow> result;
  Statement s = impl_->prepare("SELECT id, kind, name, program_id, bytes FROM phases ORDER BY id");
  while (s.step()) {
    PhaseRow row;
    row.id = s.columnInt(0);
    row.kind = s.columnText(1);
    row.name = s.columnText(2);
    row.programId = s.columnOptionalInt(3);
    row.bytes = s.columnOptionalInt(4);
    result.push_back(std::move(row));
  }
  return result;
}

std::vector<TilePhaseRow> ProfileReader::tilePhases(std::int64_t phaseId) const {
  std::vector<TilePhaseRow> result;
  Statement s = impl_->prepare(
      "SELECT phase_id, ipu, tile, cycles, vertices FROM tile_phase_cycles WHERE phase_id = ?1 "
      "ORDER BY ipu, tile");
  s.bindInt(1, phaseId);
  while (s.step()) {
    TilePhaseRow row;
    row.phaseId = s.columnInt(0);
    row.ipu = s.columnInt(1);
    row.tile = s.columnInt(2);
    row.cycles = s.columnInt(3);
    row.vertices = s.columnInt(4);
    result.push_back(row);
  }
  return result;
}

std::vector<TileMemoryRow> ProfileReader::tileMemory() const {
  std::vector<TileMemoryRow> result;
  Statement s = impl_->prepare(
      "SELECT ipu, tile, category, always_live, bytes FROM tile_memory "
      "ORDER BY ipu, tile, rowid");
  while (s.step()) {
    TileMemoryRow row;
    row.ipu = s.columnInt(0);
    row.tile = s.columnInt(1);
    row.category = s.columnText(2);
    row.alwaysLive = s.columnInt(3) != 0;
    row.bytes = s.columnInt(4);
    static const ColumnRule& ipu = columnRule("tile_memory", "ipu");
    static const ColumnRule& tile = columnRule("tile_memory", "tile");
    static const ColumnRule& bytes = columnRule("tile_memory", "bytes");
    const std::string where = key("ipu", row.ipu, "tile", row.tile) + ", category = '" + row.category + "'";
    requireValue(impl_->path, ipu, where, row.ipu);
    requireValue(impl_->path, tile, where, row.tile);
    requireValue(impl_->path, bytes, where, row.bytes);
    result.push_back(std::move(row));
  }
  return result;
}

bool ProfileReader::hasTable(const std::string& name) const {
  Statement probe = impl_->prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
  probe.bindText(1, name);
  return probe.step() && probe.columnInt(0) > 0;
}

std::vector<ProgramWorkRow> ProfileReader::programWork() const {
  std::vector<ProgramWorkRow> result;
  if (!hasTable("program_work")) return result;
  Statement s = impl_->prepare("SELECT program_id, flops, vertices, tiles FROM program_work ORDER BY program_id");
  while (s.step()) {
    result.push_back({s.columnInt(0), s.columnInt(1), s.columnInt(2), s.columnInt(3)});
    const ProgramWorkRow& row = result.back();
    static const ColumnRule& flops = columnRule("program_work", "flops");
    static const ColumnRule& vertices = columnRule("program_work", "vertices");
    static const ColumnRule& tiles = columnRule("program_work", "tiles");
    const std::string where = "program_id = " + std::to_string(row.programId);
    requireValue(impl_->path, flops, where, row.flops);
    requireValue(impl_->path, vertices, where, row.vertices);
    requireValue(impl_->path, tiles, where, row.tiles);
  }
  return result;
}

std::vector<TensorRow> ProfileReader::tensors() const {
  std::vector<TensorRow> result;
  if (!hasTable("tensors")) return result;
  Statement s = impl_->prepare(
      "SELECT id, name, category, always_live, bytes, tiles, layer, op FROM tensors ORDER BY id");
  while (s.step()) {
    TensorRow row;
    row.id = s.columnInt(0);
    row.name = s.columnText(1);
    row.category = s.columnText(2);
    row.alwaysLive = s.columnInt(3) != 0;
    row.bytes = s.columnInt(4);
    row.tiles = s.columnInt(5);
    row.layer = s.columnText(6);
    row.op = s.columnText(7);
    static const ColumnRule& bytes = columnRule("tensors", "bytes");
    static const ColumnRule& tiles = columnRule("tensors", "tiles");
    requireValue(impl_->path, bytes, idKey(row.id), row.bytes);
    requireValue(impl_->path, tiles, idKey(row.id), row.tiles);
    result.push_back(std::move(row));
  }
  return result;
}

std::vector<ProgramOrderRow> ProfileReader::programOrder() const {
  std::vector<ProgramOrderRow> result;
  if (!hasTable("program_order")) return result;
  Statement s = impl_->prepare(
      "SELECT entry_point, position, program_id FROM program_order ORDER BY entry_point, position");
  while (s.step()) result.push_back({s.columnInt(0), s.columnInt(1), s.columnInt(2)});
  return result;
}

std::vector<TensorLifetimeRow> ProfileReader::tensorLifetimes() const {
  std::vector<TensorLifetimeRow> result;
  if (!hasTable("tensor_lifetimes")) return result;
  Statement s = impl_->prepare(
      "SELECT entry_point, tensor_id, first_position, last_position FROM tensor_lifetimes "
      "ORDER BY entry_point, tensor_id");
  while (s.step()) result.push_back({s.columnInt(0), s.columnInt(1), s.columnInt(2), s.columnInt(3)});
  return result;
}

std::vector<TileMemoryPeakRow> ProfileReader::tileMemoryPeaks() const {
  std::vector<TileMemoryPeakRow> result;
  Statement probe = impl_->prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'tile_memory_peak'");
  if (!probe.step() || probe.columnInt(0) == 0) return result;
  Statement s = impl_->prepare(
      "SELECT ipu, tile, peak_bytes, always_live_bytes, not_always_live_peak_bytes FROM tile_memory_peak "
      "ORDER BY ipu, tile");
  while (s.step()) {
    result.push_back({s.columnInt(0), s.columnInt(1), s.columnInt(2), s.columnInt(3), s.columnInt(4)});
    const TileMemoryPeakRow& row = result.back();
    const std::string where = key("ipu", row.ipu, "tile", row.tile);
    for (const auto& [column, value] : {std::pair<const char*, std::int64_t>{"ipu", row.ipu},
                                        {"tile", row.tile},
                                        {"peak_bytes", row.peakBytes},
                                        {"always_live_bytes", row.alwaysLiveBytes},
                                        {"not_always_live_peak_bytes", row.notAlwaysLivePeakBytes}})
      requireValue(impl_->path, columnRule("tile_memory_peak", column), where, value);
  }
  return result;
}

std::vector<CounterRow> ProfileReader::counters(std::int64_t trackId) const {
  std::vector<CounterRow> result;
  Statement s = impl_->prepare(
      "SELECT track_id, ts, value, ifnull(run_id, -1), ifnull(step, -1) FROM counters WHERE track_id = ?1 "
      "ORDER BY ts, rowid");
  s.bindInt(1, trackId);
  while (s.step()) {
    const std::int64_t ts = s.columnInt(1);
    result.push_back(
        CounterRow{s.columnInt(0), ts, counterValue(s.get(), 2, impl_->path, trackId, ts), s.columnInt(3), s.columnInt(4)});
    static const ColumnRule& tsRule = columnRule("counters", "ts");
    requireValue(impl_->path, tsRule, key("track_id", trackId, "ts", ts), ts);
  }
  return result;
}

std::optional<CounterSummary> ProfileReader::counterSummary(std::int64_t trackId) const {
  if (!hasTable("counter_summary")) return std::nullopt;
  Statement s = impl_->prepare(std::string("SELECT ") + internal::kCounterSummaryColumns +
                               " FROM counter_summary WHERE track_id = ?1");
  s.bindInt(1, trackId);
  if (!s.step()) return std::nullopt;
  return internal::readCounterSummaryRow(s, impl_->path);
}

std::vector<SliceRow> ProfileReader::slices(std::int64_t trackId, std::int64_t from,
                                            std::int64_t to) const {
  std::vector<SliceRow> result;
  const auto lookBack = impl_->lookBack.find(trackId);
  if (lookBack == impl_->lookBack.end() || from >= to) return result;
  // A slice overlapping [from, to) that is not one of the track's long ones
  // starts at or after from - look_back: an index range, not a track scan.
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const std::int64_t earliestStart =
      from < kMin + lookBack->second ? kMin : from - lookBack->second;
  // Long slices starting before that range come first: they start earlier
  // than anything the range returns, so (ts, depth, id) order is kept.
  if (const auto longOnes = impl_->longSlices.find(trackId); longOnes != impl_->longSlices.end()) {
    for (const SliceRow& row : longOnes->second) {
      if (row.ts >= earliestStart) break;
      if (row.ts + row.dur > from) result.push_back(row);
    }
  }
  Statement& s = impl_->windowQuery;
  s.reset();
  s.bindInt(1, trackId);
  s.bindInt(2, earliestStart);
  s.bindInt(3, to);
  s.bindInt(4, from);
  while (s.step()) {
    result.push_back(readSlice(s));
    checkSlice(impl_->path, result.back());
  }
  s.reset();
  return result;
}

void ProfileReader::forEachSlice(std::int64_t trackId,
                                 const std::function<void(const SliceRow&)>& fn) const {
  // Its own statement, so that `fn` may call back into the reader.
  Statement s = impl_->prepare(std::string("SELECT ") + kSliceColumns +
                               " FROM slices WHERE track_id = ?1 ORDER BY ts, depth, id");
  s.bindInt(1, trackId);
  while (s.step()) {
    const SliceRow row = readSlice(s);
    checkSlice(impl_->path, row);
    fn(row);
  }
}

std::vector<std::string> ProfileReader::packedSliceStrings() const {
  std::vector<std::string> strings;
  if (!impl_->hasPackedCopy()) return strings;
  Statement s = impl_->prepare("SELECT id, text FROM slice_strings ORDER BY id");
  while (s.step()) {
    const std::int64_t id = s.columnInt(0);
    if (id != static_cast<std::int64_t>(strings.size()))
      throw ProfileError(impl_->path + ": corrupt slice_strings: id " + std::to_string(id) + " where " +
                         std::to_string(strings.size()) + " was expected");
    strings.push_back(s.columnText(1));
  }
  return strings;
}

bool ProfileReader::forEachPackedChunk(std::int64_t trackId,
                                       const std::function<void(const PackedSlices&)>& fn) const {
  return forEachPackedChunk(trackId, 0, std::numeric_limits<std::int64_t>::max(), fn);
}

bool ProfileReader::forEachPackedChunk(std::int64_t trackId, std::int64_t firstChunk, std::int64_t lastChunk,
                                       const std::function<void(const PackedSlices&)>& fn) const {
  if (!impl_->hasPackedCopy()) return false;
  Statement stringCount = impl_->prepare("SELECT count(*) FROM slice_strings");
  stringCount.step();
  const auto limit = static_cast<std::uint64_t>(stringCount.columnInt(0));
  Statement chunks = impl_->prepare(
      "SELECT slice_count, data FROM slice_chunks WHERE track_id = ?1 AND chunk BETWEEN ?2 AND ?3 ORDER BY chunk");
  chunks.bindInt(1, trackId);
  chunks.bindInt(2, firstChunk);
  chunks.bindInt(3, lastChunk);
  PackedSlices chunk;
  while (chunks.step()) {
    const std::int64_t count = chunks.columnInt(0);
    const auto [data, size] = chunks.columnBlob(1);
    if (count < 0)
      throw ProfileError(impl_->path + ": corrupt slice_chunks row of track " + std::to_string(trackId) +
                         ": slice_count " + std::to_string(count));
    // Reused: freeing and mapping megabytes per chunk costs TLB shootdowns
    // that stall the caller's other threads (the viewer's UI).
    chunk.clear();
    chunk.reserve(static_cast<std::size_t>(count));
    internal::decodeSliceChunk(data, size, static_cast<std::size_t>(count), chunk, impl_->path);
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      if (chunk.name[i] >= limit || chunk.category[i] >= limit)
        throw ProfileError(impl_->path + ": corrupt slice_chunks of track " + std::to_string(trackId) +
                           ": a string id beyond slice_strings");
      checkPackedSlice(impl_->path, trackId, chunk, i);
    }
    fn(chunk);
  }
  return true;
}

std::vector<PackedChunkSpan> ProfileReader::packedChunkSpans(std::int64_t trackId) const {
  std::vector<PackedChunkSpan> spans;
  if (!impl_->hasPackedCopy()) return spans;
  Statement s = impl_->prepare(
      "SELECT chunk, slice_count, min_ts, max_end FROM slice_chunks WHERE track_id = ?1 ORDER BY chunk");
  s.bindInt(1, trackId);
  while (s.step()) {
    PackedChunkSpan span{s.columnInt(0), s.columnInt(1), s.columnInt(2), s.columnInt(3)};
    if (span.chunk != std::int64_t(spans.size()) || span.sliceCount < 0 || span.maxEnd < span.minTs)
      throw ProfileError(impl_->path + ": corrupt slice_chunks row of track " + std::to_string(trackId) +
                         ": chunk " + std::to_string(span.chunk) + " (expected " + std::to_string(spans.size()) +
                         ") with " + std::to_string(span.sliceCount) + " slices over [" +
                         std::to_string(span.minTs) + ", " + std::to_string(span.maxEnd) + "]");
    spans.push_back(span);
  }
  return spans;
}


std::vector<SliceSummary> ProfileReader::sliceSummaries(std::int64_t trackId) const {
  std::vector<SliceSummary> out;
  if (!hasTable("slice_summary")) return out;
  Statement stringCount = impl_->prepare("SELECT count(*) FROM slice_strings");
  stringCount.step();
  const auto strings = static_cast<std::uint64_t>(stringCount.columnInt(0));
  Statement s = impl_->prepare(
      "SELECT depth, origin_ts, bucket_cycles, bucket_count, busy, category FROM slice_summary "
      "WHERE track_id = ?1 ORDER BY depth");
  s.bindInt(1, trackId);
  while (s.step()) {
    SliceSummary summary;
    summary.depth = s.columnInt(0);
    summary.originTs = s.columnInt(1);
    summary.bucketCycles = s.columnInt(2);
    const std::int64_t count = s.columnInt(3);
    const std::string what = impl_->path + ": corrupt slice_summary row of track " + std::to_string(trackId) +
                             " depth " + std::to_string(summary.depth);
    // Bounded by the data: no more buckets than the writer ever makes.
    static const ColumnRule& depth = columnRule("slices", "depth");  // a summary's depth is a slices.depth
    if (summary.depth < depth.min || summary.depth > depth.max || summary.bucketCycles < 1 || count < 0 ||
        count > (std::int64_t(1) << 24))
      throw ProfileError(what + ": depth, bucket_cycles " + std::to_string(summary.bucketCycles) +
                         " or bucket_count " + std::to_string(count) + " out of range");
    summary.busy = internal::decodeWords(s.columnBlob(4), count, what + ": busy");
    summary.category = internal::decodeWords(s.columnBlob(5), count, what + ": category");
    for (const std::uint32_t c : summary.category)
      if (c != SliceSummary::kNoCategory && c >= strings)
        throw ProfileError(what + ": a category id beyond slice_strings");
    out.push_back(std::move(summary));
  }
  return out;
}

bool ProfileReader::readPackedSlices(std::int64_t trackId, PackedSlices& out) const {
  out = PackedSlices{};
  std::vector<std::string> strings = packedSliceStrings();
  const bool found = forEachPackedChunk(trackId, [&](const PackedSlices& chunk) {
    if (out.size() == 0) {
      // One allocation for the whole track.
      Statement total =
          impl_->prepare("SELECT coalesce(sum(slice_count), 0) FROM slice_chunks WHERE track_id = ?1");
      total.bindInt(1, trackId);
      if (total.step() && total.columnInt(0) > 0) out.reserve(static_cast<std::size_t>(total.columnInt(0)));
    }
    const auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    append(out.id, chunk.id);
    append(out.ts, chunk.ts);
    append(out.dur, chunk.dur);
    append(out.depth, chunk.depth);
    append(out.name, chunk.name);
    append(out.category, chunk.category);
    append(out.programId, chunk.programId);
    append(out.phaseId, chunk.phaseId);
  });
  if (found) out.strings = std::move(strings);
  return found;
}

std::int64_t ProfileReader::sliceCount() const {
  Statement s = impl_->prepare("SELECT coalesce(sum(slice_count), 0) FROM slice_track_stats");
  s.step();
  return s.columnInt(0);
}

std::pair<std::int64_t, std::int64_t> ProfileReader::timeExtent() const {
  Statement s = impl_->prepare("SELECT min(min_ts), max(max_end) FROM slice_track_stats");
  if (!s.step() || s.columnIsNull(0)) return {0, 0};
  return {s.columnInt(0), s.columnInt(1)};
}

sqlite3* ProfileReader::db() const { return impl_->db; }

}  // namespace ipusim::traces
