#pragma once
// Internal to traces/: checks 7 and 8 of SCHEMA.md "Verifying a profile",
// how rows point at each other: the program tree (programs.parent_id) and
// what windowed slice queries rely on (slice_track_stats, long_slices).
// verifyProfileIntegrity runs them after check 6, which found the ids they
// read integers. Each throws ProfileError naming the file and the row.
#include <string>

struct sqlite3;

namespace ipusim::traces::internal {

void checkProgramTree(sqlite3* db, const std::string& path);
void checkSliceIndex(sqlite3* db, const std::string& path);

}  // namespace ipusim::traces::internal
