#include "traces/profile_verification.hpp"

#include "traces/internal/counter_summary_rows.hpp"
#include "traces/internal/sqlite_statement.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_rules.hpp"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <filesystem>
#include <system_error>
#include <unordered_map>
#include <vector>
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

// Check 7: the programs' parent_id links form a tree (a forest of entry
// points): each names a program, and none leads back to where it started.
// Readers walk up these links (a program's path, its debug origin, the
// depth of the tree): a cycle would loop or fail in some of them and not in
// others. Runs after check 6, which found every id and parent_id an integer.
// Each program is visited once, in id order (the order the Python reader
// walks them in, so both name the same row).
void checkProgramTree(sqlite3* db, const std::string& path) {
  std::unordered_map<std::int64_t, std::int64_t> parentOf;  // parent -1: an entry point
  std::vector<std::int64_t> ids;
  Statement rows(db, "SELECT id, parent_id FROM programs ORDER BY id", path);
  while (rows.step()) {
    ids.push_back(rows.columnInt(0));
    parentOf[ids.back()] = rows.columnIsNull(1) ? -1 : rows.columnInt(1);
  }
  enum State : char { kOnPath = 1, kInTree = 2 };
  std::unordered_map<std::int64_t, char> state;
  std::vector<std::int64_t> walk;
  const auto refuse = [&](std::int64_t id, const std::string& expected) {
    throw ProfileError(path + ": damaged profile: programs.parent_id is " + std::to_string(parentOf.at(id)) +
                       " in the row with id = " + std::to_string(id) + "; expected " + expected);
  };
  for (const std::int64_t start : ids) {
    if (state.count(start)) continue;  // in the tree already
    walk.clear();
    for (std::int64_t at = start;;) {  // up from `start` to an entry point or a program known to be in the tree
      state[at] = kOnPath;
      walk.push_back(at);
      const std::int64_t parent = parentOf.at(at);
      if (parent < 0) break;
      if (!parentOf.count(parent))
        refuse(at, "NULL or the id of a program (no program has id " + std::to_string(parent) + ")");
      const auto known = state.find(parent);
      if (known != state.end() && known->second == kInTree) break;
      if (known != state.end()) {  // on this walk: the links lead from `parent` back to it
        const auto first = std::find(walk.begin(), walk.end(), parent);
        std::string cycle;
        for (auto it = first; it != walk.end() && it - first < 8; ++it) cycle += std::to_string(*it) + " -> ";
        if (walk.end() - first > 8) cycle += "... -> ";
        refuse(at, "NULL or the id of a program that does not descend from it (the parent_id links " + cycle +
                       std::to_string(parent) + " form a cycle)");
      }
      at = parent;
    }
    for (const std::int64_t id : walk) state[id] = kInTree;
  }
}

// Check 8: what windowed slice queries rely on (slice_track_stats,
// long_slices) agrees with the slices: every track with slices has a stats
// row counting them, and every slice longer than its track's look_back is
// one of its long_slices. Otherwise a windowed query (the viewer's selection,
// an analysis over a short range) would miss slices without a word.
void checkSliceIndex(sqlite3* db, const std::string& path) {
  Statement counted(db,
                    "SELECT st.track_id, st.slice_count, (SELECT count(*) FROM slices AS s WHERE s.track_id = st.track_id) "
                    "AS actual FROM slice_track_stats AS st WHERE st.slice_count != actual ORDER BY st.track_id LIMIT 1",
                    path);
  if (counted.step())
    throw ProfileError(path + ": damaged profile: slice_track_stats.slice_count is " + std::to_string(counted.columnInt(1)) +
                       " in the row with track_id = " + std::to_string(counted.columnInt(0)) + "; slices holds " +
                       std::to_string(counted.columnInt(2)) + " of that track");
  // The counts being right, they add up to the slices of every track with a
  // stats row: fewer than the table holds means a track without one (found
  // then by the slower query, which names it).
  Statement total(db, "SELECT (SELECT count(*) FROM slices) - (SELECT total(slice_count) FROM slice_track_stats)", path);
  if (total.step() && total.columnInt(0) != 0) {
    Statement unindexed(db,
                        "SELECT s.track_id FROM slices AS s WHERE NOT EXISTS "
                        "(SELECT 1 FROM slice_track_stats AS st WHERE st.track_id = s.track_id) ORDER BY s.id LIMIT 1",
                        path);
    if (unindexed.step())
      throw ProfileError(path + ": damaged profile: table slices has rows of track_id " +
                         std::to_string(unindexed.columnInt(0)) + ", which has no row in slice_track_stats");
  }
  Statement uncovered(db,
                      "SELECT s.id, s.track_id, s.dur, st.look_back FROM slices AS s "
                      "JOIN slice_track_stats AS st ON st.track_id = s.track_id WHERE s.dur > st.look_back AND "
                      "NOT EXISTS (SELECT 1 FROM long_slices AS l WHERE l.track_id = s.track_id AND l.slice_id = s.id) "
                      "ORDER BY s.id LIMIT 1",
                      path);
  if (uncovered.step())
    throw ProfileError(path + ": damaged profile: slice_track_stats.look_back is " +
                       std::to_string(uncovered.columnInt(3)) + " in the row with track_id = " +
                       std::to_string(uncovered.columnInt(1)) + ", but slice " + std::to_string(uncovered.columnInt(0)) +
                       " of that track lasts " + std::to_string(uncovered.columnInt(2)) +
                       " cycles and is not in long_slices (a windowed query would miss it)");
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
  checkProgramTree(db, path);
  checkSliceIndex(db, path);
}

void verifyProfileFile(const std::string& path) {
  const ProfileReader reader(path);  // opening runs every check
}

}  // namespace ipusim::traces
