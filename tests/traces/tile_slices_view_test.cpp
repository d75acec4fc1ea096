// The tile_slices view expands each BSP slice with a phase into one slice per
// tile of that phase on the track's IPU that was busy (cycles > 0).
#include "scratch_directory.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <tuple>

namespace ipusim::traces::tile_slices_view_test {
namespace {

using testing::ScratchDirectory;

// run_id, ipu, tile, ts, dur, category, name, phase_id, program_id
using TileSlice = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                             std::string, std::string, std::int64_t, std::int64_t>;

std::vector<TileSlice> queryTileSlices(sqlite3* db, const char* where) {
  const std::string sql =
      std::string("SELECT run_id, ipu, tile, ts, dur, category, name, phase_id, program_id "
                  "FROM tile_slices ") + where + " ORDER BY ts, ipu, tile";
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::vector<TileSlice> rows;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    auto text = [&](int i) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, i))); };
    rows.emplace_back(sqlite3_column_int64(stmt, 0), sqlite3_column_int64(stmt, 1),
                      sqlite3_column_int64(stmt, 2), sqlite3_column_int64(stmt, 3),
                      sqlite3_column_int64(stmt, 4), text(5), text(6),
                      sqlite3_column_int64(stmt, 7), sqlite3_column_int64(stmt, 8));
  }
  sqlite3_finalize(stmt);
  return rows;
}

TEST(TileSlicesView, OneTileSlicePerBusyTileOfTheTracksIpuEachTimeThePhaseRuns) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter writer(path);
    const auto bsp0 = writer.addTrack(TrackRow{0, -1, "bsp", "IPU 0 BSP", 0, -1, 0});
    const auto bsp1 = writer.addTrack(TrackRow{0, -1, "bsp", "IPU 1 BSP", 1, -1, 1});
    const auto program = writer.addTrack(TrackRow{0, -1, "program", "IPU 0 programs", 0, -1, 2});
    writer.addPhase(PhaseRow{1, "compute", "fc1", 7, -1});
    writer.addPhase(PhaseRow{2, "exchange", "fc1/x", 8, 512});
    writer.addTilePhase(TilePhaseRow{1, 0, 0, 300, 2});
    writer.addTilePhase(TilePhaseRow{1, 0, 1, 250, 1});
    writer.addTilePhase(TilePhaseRow{1, 0, 2, 0, 0});      // idle tile: no slice
    writer.addTilePhase(TilePhaseRow{1, 1, 1472, 120, 1}); // other IPU: only for bsp1
    writer.addTilePhase(TilePhaseRow{2, 0, 1, 40, 512});
    // Phase 1 runs twice on IPU 0 (runs 0 and 1) and once on IPU 1.
    writer.addSlice(SliceRow{0, bsp0, 0, 1000, 300, "fc1", "compute", 0, -1, 7, 1, -1});
    writer.addSlice(SliceRow{0, bsp0, 0, 1300, 40, "fc1/x", "exchange", 0, -1, 8, 2, 512});
    writer.addSlice(SliceRow{0, bsp0, 1, 5000, 300, "fc1", "compute", 0, -1, 7, 1, -1});
    writer.addSlice(SliceRow{0, bsp1, 1, 5000, 120, "fc1", "compute", 0, -1, 7, 1, -1});
    // Not expanded: a BSP slice without a phase, and a phase slice on a non-BSP track.
    writer.addSlice(SliceRow{0, bsp0, 1, 5300, 10, "sync", "sync", 0, -1, -1, -1, -1});
    writer.addSlice(SliceRow{0, program, 1, 5000, 300, "fc1", "program", 0, -1, 7, 1, -1});
    writer.commit();
  }
  ProfileReader reader(path);
  EXPECT_EQ(queryTileSlices(reader.db(), ""),
            (std::vector<TileSlice>{
                {0, 0, 0, 1000, 300, "compute", "fc1", 1, 7},
                {0, 0, 1, 1000, 250, "compute", "fc1", 1, 7},
                {0, 0, 1, 1300, 40, "exchange", "fc1/x", 2, 8},
                {1, 0, 0, 5000, 300, "compute", "fc1", 1, 7},
                {1, 0, 1, 5000, 250, "compute", "fc1", 1, 7},
                {1, 1, 1472, 5000, 120, "compute", "fc1", 1, 7},
            }));
  EXPECT_EQ(queryTileSlices(reader.db(), "WHERE run_id = 0 AND tile = 1").size(), 2u);
}

}  // namespace
}  // namespace ipusim::traces::tile_slices_view_test
