#pragma once
// The checks every reader of a profile makes before trusting it (the
// ProfileReader runs them on open, so `report`, `compare`, `export` and the
// viewer all do; the Python reader makes the same ones, see SCHEMA.md):
//   1. the file's length against its header, and SQLite's own structure
//      check (PRAGMA quick_check);
//   2. meta.schema_version is a version this build reads, meta.complete = 1,
//      the meta keys the analyses read follow profile_rules.json's rules
//      (numbers within bounds, stream_directions an object of directions);
//   3. meta.row_counts — the number of rows of every table, recorded by the
//      writer at commit — matches the tables as they are;
//   4. every counter_summary row is well formed and summarises as many
//      values as its track has in counters;
//   5. every row of slices and counters has a track_id that names a track;
//   6. every value a rule of profile_rules.json bounds lies within it
//      (traces/profile_rules.hpp; the Python reader applies the same file);
//   7. the programs' parent_id links form a tree: each names a program, and
//      none leads back to the program it starts from;
//   8. slice_track_stats and long_slices, which windowed slice queries rely
//      on, agree with the slices (a count per track, every slice longer
//      than its track's look_back a long slice).
// A failure throws ProfileError naming the file and the first problem found.
#include "traces/profile_error.hpp"

#include <cstdint>
#include <map>
#include <string>

struct sqlite3;

namespace ipusim::traces {

// The tables whose rows the writer counts into meta.row_counts, as
// {"table": rows, ...} (a JSON object).
const char* const* countedTables();  // null-terminated
inline constexpr const char* kRowCountsMetaKey = "row_counts";

// Counts the rows of every counted table of an open profile.
std::map<std::string, std::int64_t> countRows(sqlite3* db, const std::string& path);

// Check 1, then 3 to 8 (check 2 needs the meta table, which the reader reads first).
// With `wholeFile` false only the file length and the presence of row_counts
// are checked: quick_check and counting rows read the whole file (seconds for
// a profile of 100 million slices), and the viewer runs them on a background
// thread instead (verifyProfileFile) so that opening stays fast.
void verifyProfileIntegrity(sqlite3* db, const std::string& path, bool wholeFile = true);

// Opens `path` read-only and runs all three checks. For tools that only verify.
void verifyProfileFile(const std::string& path);

}  // namespace ipusim::traces
