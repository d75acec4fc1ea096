#include "traces/profile_verification.hpp"

#include "traces/internal/counter_summary_rows.hpp"
#include "traces/internal/sqlite_statement.hpp"
#include "traces/internal/structure_checks.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_rules.hpp"

#include <nlohmann/json.hpp>
#include <filesystem>
#include <system_error>
#include <sqlite3.h>

namespace ipusim::traces {

using internal::Statement;

namespace {
const char* const kCountedTables[] = {"meta",        "runs",          "tracks",      "slices",
                                      "programs",    "phases",        "tile_phase_cycles",
                                      "tile_memory", "tile_memory_peak", "counters", "program_work",
                                      "tensors",     "program_order", "tensor_lifetimes", "slice_track_stats",
                                      "long_slices", "slice_strings", "slice_chunks",
                                      "slice_summary", "counter_summary", nullptr};

// SQLite reads a missing end of file as zeros, and quick_check may find
// nothing wrong when the lost bytes were free space: the file must be as
// long as its header says.
void checkLength(sqlite3* db, const std::string& path) {
  Statement pageSize(db, "PRAGMA page_size", path), pageCount(db, "PRAGMA page_count", path);
  const std::int64_t expected = (pageSize.step() ? pageSize.columnInt(0) : 0) * (pageCount.step() ? pageCount.columnInt(0) : 0);
  std::error_code ec;
  const auto actual = std::filesystem::file_size(path, ec);
  if (!ec && std::int64_t(actual) != expected)
    throw ProfileError(path + ": corrupt or truncated profile (the file has " + std::to_string(actual) +
                       " bytes, its database header says " + std::to_string(expected) + ")");
}

void quickCheck(sqlite3* db, const std::string& path) {
  Statement check(db, "PRAGMA quick_check(1)", path);
  std::string verdict;
  try {
    if (check.step()) verdict = check.columnText(0);
  } catch (const ProfileError&) {
    throw ProfileError(path + ": corrupt or truncated profile (SQLite quick_check failed: " +
                       sqlite3_errmsg(db) + ")");
  }
  if (verdict != "ok")
    throw ProfileError(path + ": corrupt or truncated profile (SQLite quick_check: " + verdict + ")");
}

// Check 4: every counter_summary row holds what it says (readCounterSummaryRow)
// and summarises as many values as its track has: a summary the viewer draws
// instead of the values must agree with them.
void checkCounterSummaries(sqlite3* db, const std::string& path) {
  Statement exists(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'counter_summary'", path);
  if (!(exists.step() && exists.columnInt(0) > 0)) return;
  Statement rows(db, std::string("SELECT ") + internal::kCounterSummaryColumns + " FROM counter_summary", path);
  Statement values(db, "SELECT count(*) FROM counters WHERE track_id = ?1", path);
  while (rows.step()) {
    const CounterSummary summary = internal::readCounterSummaryRow(rows, path);
    values.reset();
    values.bindInt(1, rows.columnInt(0));
    const std::int64_t actual = values.step() ? values.columnInt(0) : 0;
    if (actual != summary.valueCount)
      throw ProfileError(path + ": damaged profile: counter_summary row of track " + std::to_string(rows.columnInt(0)) +
                         " summarises " + std::to_string(summary.valueCount) + " values, counters holds " +
                         std::to_string(actual));
  }
}

// Check 5: every row of slices and counters belongs to a track. Readers read
// them track by track, so a row whose track_id names no track would be
// dropped from every figure without a word. The distinct track ids are
// visited through the (track_id, ts) indexes, one seek each.
// A track_id that is not an INTEGER (a REAL 1.5, a text) would be read as
// another number and loop forever: refused as check 6 words it.
void requireIntegerTrackId(const Statement& s, const std::string& path, const char* table) {
  if (sqlite3_column_type(s.get(), 0) == SQLITE_INTEGER) return;
  throw ProfileError(path + ": damaged profile: " + table + ".track_id is " + describeSqliteValue(s.get(), 0) +
                     "; expected an integer (a track id)");
}

void checkTrackReferences(sqlite3* db, const std::string& path) {
  Statement track(db, "SELECT count(*) FROM tracks WHERE id = ?1", path);
  for (const char* table : {"slices", "counters"}) {
    Statement next(db, std::string("SELECT min(track_id) FROM ") + table + " WHERE track_id > ?1", path);
    Statement first(db, std::string("SELECT min(track_id) FROM ") + table, path);
    if (!first.step() || first.columnIsNull(0)) continue;
    requireIntegerTrackId(first, path, table);
    for (std::int64_t id = first.columnInt(0);;) {
      track.reset();
      track.bindInt(1, id);
      if (!(track.step() && track.columnInt(0) > 0))
        throw ProfileError(path + ": damaged profile: table " + table + " has rows of track_id " + std::to_string(id) +
                           ", which names no track");
      next.reset();
      next.bindInt(1, id);
      if (!next.step() || next.columnIsNull(0)) break;
      requireIntegerTrackId(next, path, table);
      id = next.columnInt(0);
    }
  }
}

// Every run of an entry point carries its name, and no two entry points
// share one (an executable's entry points have distinct names): readers
// count runs by name (report's and the viewer's runs by entry point,
// compare's throughput without the validation's steps), so a damaged name
// merged two entry points or split one without a word.
void checkEntryPointNames(sqlite3* db, const std::string& path) {
  Statement split(db,
                  "SELECT entry_point, min(name), max(name) FROM runs GROUP BY entry_point "
                  "HAVING count(DISTINCT name) > 1 ORDER BY entry_point LIMIT 1",
                  path);
  if (split.step())
    throw ProfileError(path + ": damaged profile: the runs of entry_point " + std::to_string(split.columnInt(0)) +
                       " are named " + describeSqliteValue(split.get(), 1) + " and " +
                       describeSqliteValue(split.get(), 2) + "; expected one name per entry point");
  Statement shared(db,
                   "SELECT name, min(entry_point), max(entry_point) FROM runs GROUP BY name "
                   "HAVING count(DISTINCT entry_point) > 1 ORDER BY min(entry_point) LIMIT 1",
                   path);
  if (shared.step())
    throw ProfileError(path + ": damaged profile: runs of entry points " + std::to_string(shared.columnInt(1)) +
                       " and " + std::to_string(shared.columnInt(2)) + " are both named " +
                       describeSqliteValue(shared.get(), 0) + "; expected distinct names");
}

}  // namespace

const char* const* countedTables() { return kCountedTables; }

// The packed copy, its summary and the peaks are optional (profiles written before they existed have none).
static bool isOptionalTable(const std::string& table) {
  return table == "slice_chunks" || table == "slice_strings" || table == "slice_summary" ||
         table == "counter_summary" || table == "tile_memory_peak";
}

std::map<std::string, std::int64_t> countRows(sqlite3* db, const std::string& path) {
  std::map<std::string, std::int64_t> counts;
  Statement exists(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", path);
  for (const char* const* table = kCountedTables; *table; ++table) {
    exists.reset();
    exists.bindText(1, *table);
    if (!(exists.step() && exists.columnInt(0) > 0)) {
      if (isOptionalTable(*table)) continue;
      throw ProfileError(path + ": damaged profile: table " + *table + " is missing");
    }
    Statement count(db, std::string("SELECT count(*) FROM ") + *table, path);
    counts[*table] = count.step() ? count.columnInt(0) : 0;
  }
  return counts;
}

void verifyProfileIntegrity(sqlite3* db, const std::string& path, bool wholeFile) {
  checkLength(db, path);
  if (wholeFile) quickCheck(db, path);
  Statement recorded(db, "SELECT value FROM meta WHERE key = ?1", path);
  recorded.bindText(1, kRowCountsMetaKey);
  if (!recorded.step())
    throw ProfileError(path + ": damaged profile: meta has no " + kRowCountsMetaKey +
                       " (the row counts its writer recorded)");
  const nlohmann::json expected = nlohmann::json::parse(recorded.columnText(0), nullptr, false);
  if (!expected.is_object())
    throw ProfileError(path + ": damaged profile: meta " + kRowCountsMetaKey + " is not a JSON object");
  if (!wholeFile) return;
  // meta itself gains no rows after the count is taken: row_counts is written last
  // and counted (the writer counts meta with its own row included).
  const auto actual = countRows(db, path);
  for (const auto& [table, rows] : actual) {
    const auto it = expected.find(table);
    if (it == expected.end() || !it->is_number_integer())
      throw ProfileError(path + ": damaged profile: meta " + kRowCountsMetaKey + " has no count for table " + table);
    if (it->get<std::int64_t>() != rows)
      throw ProfileError(path + ": damaged profile: table " + table + " has " + std::to_string(rows) +
                         " rows, its writer recorded " + std::to_string(it->get<std::int64_t>()));
  }
  checkCounterSummaries(db, path);
  checkTrackReferences(db, path);
  checkColumnRules(db, path);
  checkEntryPointNames(db, path);
  internal::checkProgramTree(db, path);
  internal::checkSliceIndex(db, path);
}

void verifyProfileFile(const std::string& path) {
  const ProfileReader reader(path);  // opening runs every check
}

}  // namespace ipusim::traces
