#include "traces/internal/structure_checks.hpp"

#include "traces/internal/sqlite_statement.hpp"
#include "traces/profile_error.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ipusim::traces::internal {

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

}  // namespace ipusim::traces::internal
