// Every table written by ProfileWriter reads back through ProfileReader
// field for field, NULL optionals included.
#include "scratch_directory.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

namespace ipusim::traces::profile_round_trip_test {
namespace {

using testing::ScratchDirectory;

TEST(ProfileRoundTrip, EveryTableReadsBackAsWritten) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter writer(path);
    writer.setMeta("arch", "ipu2");
    writer.setMeta("clock_hz", "1330000000");
    writer.setMeta("arch", "ipu1");  // a key set twice keeps the last value

    writer.addRun(RunRow{0, 1, "train", 100, 900, 10, true});
    writer.addRun(RunRow{1, 1, "train", 1000, 1500, 10, false});

    const std::int64_t engine = writer.addTrack(TrackRow{0, -1, "engine", "Engine", -1, -1, 0});
    const std::int64_t ipu = writer.addTrack(TrackRow{0, -1, "ipu", "IPU 0", 0, -1, 1});
    const std::int64_t bsp = writer.addTrack(TrackRow{0, ipu, "bsp", "BSP", 0, -1, 2});
    const std::int64_t explicitId = writer.addTrack(TrackRow{40, ipu, "tile", "tile 3", 0, 3, 3});
    const std::int64_t afterExplicit = writer.addTrack(TrackRow{0, -1, "counter", "loss", -1, -1, 4});
    EXPECT_EQ(engine, 1);
    EXPECT_EQ(ipu, 2);
    EXPECT_EQ(bsp, 3);
    EXPECT_EQ(explicitId, 40);
    EXPECT_EQ(afterExplicit, 41);

    const std::int64_t run = writer.addSlice(
        SliceRow{0, engine, 0, 100, 800, "Engine::run", "engine_run", 0, -1, -1, -1, -1});
    const std::int64_t step = writer.addSlice(
        SliceRow{0, engine, 0, 120, 70, "step 0", "step", 1, run, -1, -1, -1});
    const std::int64_t exchange = writer.addSlice(
        SliceRow{0, bsp, 0, 130, 25, "exchange fc1", "exchange", 0, -1, 7, 2, 4096});
    EXPECT_EQ(run, 1);
    EXPECT_EQ(step, 2);
    EXPECT_EQ(exchange, 3);
    EXPECT_EQ(writer.slicesWritten(), 3u);

    writer.addProgram(ProgramRow{1, -1, "Sequence", "main", "", "", 0});
    writer.addProgram(ProgramRow{7, 1, "Execute", "fc1/matmul", "dense_1", "MatMul", 2});
    writer.addPhase(PhaseRow{1, "compute", "fc1/matmul", 7, -1});
    writer.addPhase(PhaseRow{2, "exchange", "fc1/exchange", 7, 4096});
    writer.addTilePhase(TilePhaseRow{1, 0, 5, 1234, 6});
    writer.addTilePhase(TilePhaseRow{1, 0, 2, 1200, 4});
    writer.addTileMemory(TileMemoryRow{0, 2, "weights", true, 65536});
    writer.addTileMemory(TileMemoryRow{0, 2, "activations", false, 1024});
    writer.addTileMemoryPeak(TileMemoryPeakRow{0, 2, 66048, 65536, 512});
    writer.addTileMemoryPeak(TileMemoryPeakRow{0, 1, 8, 8, 0});
    writer.addCounter(CounterRow{afterExplicit, 200, 2.25});
    writer.addCounter(CounterRow{afterExplicit, 150, 2.5});
    writer.commit();
  }

  ProfileReader reader(path);
  EXPECT_EQ(reader.path(), path);
  const auto meta = reader.meta();
  EXPECT_EQ(meta.at("schema_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(meta.at("complete"), "1");
  EXPECT_EQ(meta.at("arch"), "ipu1");
  EXPECT_EQ(meta.at("clock_hz"), "1330000000");
  EXPECT_EQ(meta.size(), 5u);  // and row_counts, written at commit
  EXPECT_EQ(nlohmann::json::parse(meta.at("row_counts")).at("meta"), 5);
  EXPECT_EQ(reader.metaValue("missing", "fallback"), "fallback");

  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, 0);
  EXPECT_EQ(runs[0].entryPoint, 1);
  EXPECT_EQ(runs[0].name, "train");
  EXPECT_EQ(runs[0].startCycle, 100);
  EXPECT_EQ(runs[0].endCycle, 900);
  EXPECT_EQ(runs[0].steps, 10);
  EXPECT_TRUE(runs[0].captured);
  EXPECT_FALSE(runs[1].captured);
  EXPECT_EQ(runs[1].startCycle, 1000);

  const auto tracks = reader.tracks();
  ASSERT_EQ(tracks.size(), 5u);
  EXPECT_EQ(tracks[0].id, 1);
  EXPECT_EQ(tracks[0].parentId, -1);
  EXPECT_EQ(tracks[0].kind, "engine");
  EXPECT_EQ(tracks[0].ipu, -1);
  EXPECT_EQ(tracks[2].parentId, 2);
  EXPECT_EQ(tracks[2].kind, "bsp");
  EXPECT_EQ(tracks[2].ipu, 0);
  EXPECT_EQ(tracks[3].id, 40);
  EXPECT_EQ(tracks[3].tile, 3);
  EXPECT_EQ(tracks[3].name, "tile 3");
  EXPECT_EQ(tracks[3].sortOrder, 3);

  const auto engineSlices = reader.slices(1, 0, 10'000);
  ASSERT_EQ(engineSlices.size(), 2u);
  EXPECT_EQ(engineSlices[0].name, "Engine::run");
  EXPECT_EQ(engineSlices[0].category, "engine_run");
  EXPECT_EQ(engineSlices[0].parentId, -1);
  EXPECT_EQ(engineSlices[0].runId, 0);
  EXPECT_EQ(engineSlices[1].depth, 1);
  EXPECT_EQ(engineSlices[1].parentId, 1);
  EXPECT_EQ(engineSlices[1].ts, 120);
  EXPECT_EQ(engineSlices[1].dur, 70);
  const auto bspSlices = reader.slices(3, 0, 10'000);
  ASSERT_EQ(bspSlices.size(), 1u);
  EXPECT_EQ(bspSlices[0].id, 3);
  EXPECT_EQ(bspSlices[0].trackId, 3);
  EXPECT_EQ(bspSlices[0].programId, 7);
  EXPECT_EQ(bspSlices[0].phaseId, 2);
  EXPECT_EQ(bspSlices[0].bytes, 4096);
  EXPECT_EQ(reader.sliceCount(), 3);
  EXPECT_EQ(reader.timeExtent(), std::make_pair(std::int64_t{100}, std::int64_t{900}));

  const auto programs = reader.programs();
  ASSERT_EQ(programs.size(), 2u);
  EXPECT_EQ(programs[0].parentId, -1);
  EXPECT_EQ(programs[0].layer, "");
  EXPECT_EQ(programs[1].id, 7);
  EXPECT_EQ(programs[1].parentId, 1);
  EXPECT_EQ(programs[1].kind, "Execute");
  EXPECT_EQ(programs[1].name, "fc1/matmul");
  EXPECT_EQ(programs[1].layer, "dense_1");
  EXPECT_EQ(programs[1].op, "MatMul");
  EXPECT_EQ(programs[1].ordinal, 2);

  const auto phases = reader.phases();
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].kind, "compute");
  EXPECT_EQ(phases[0].bytes, -1);
  EXPECT_EQ(phases[1].name, "fc1/exchange");
  EXPECT_EQ(phases[1].programId, 7);
  EXPECT_EQ(phases[1].bytes, 4096);

  const auto tiles = reader.tilePhases(1);  // ordered by ipu, tile
  ASSERT_EQ(tiles.size(), 2u);
  EXPECT_EQ(tiles[0].tile, 2);
  EXPECT_EQ(tiles[0].cycles, 1200);
  EXPECT_EQ(tiles[0].vertices, 4);
  EXPECT_EQ(tiles[1].tile, 5);
  EXPECT_EQ(tiles[1].cycles, 1234);
  EXPECT_TRUE(reader.tilePhases(2).empty());

  const auto memory = reader.tileMemory();
  ASSERT_EQ(memory.size(), 2u);
  EXPECT_EQ(memory[0].category, "weights");
  EXPECT_TRUE(memory[0].alwaysLive);
  EXPECT_EQ(memory[0].bytes, 65536);
  EXPECT_EQ(memory[1].category, "activations");
  EXPECT_FALSE(memory[1].alwaysLive);
  const auto peaks = reader.tileMemoryPeaks();  // ordered by (ipu, tile)
  ASSERT_EQ(peaks.size(), 2u);
  EXPECT_EQ(peaks[0].tile, 1);
  EXPECT_EQ(peaks[1].tile, 2);
  EXPECT_EQ(peaks[1].peakBytes, 66048);
  EXPECT_EQ(peaks[1].alwaysLiveBytes, 65536);
  EXPECT_EQ(peaks[1].notAlwaysLivePeakBytes, 512);

  const auto loss = reader.counters(41);  // ordered by ts
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_EQ(loss[0].ts, 150);
  EXPECT_DOUBLE_EQ(loss[0].value, 2.5);
  EXPECT_EQ(loss[1].ts, 200);
  EXPECT_DOUBLE_EQ(loss[1].value, 2.25);
  EXPECT_TRUE(reader.counters(1).empty());
}

TEST(ProfileRoundTrip, OptionalsAreStoredAsSqlNull) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter writer(path);
    const auto track = writer.addTrack(TrackRow{0, -1, "host", "host", -1, -1, 0});
    writer.addSlice(SliceRow{0, track, -1, 0, 5, "wait", "host", 0, -1, -1, -1, -1});
    writer.commit();
  }
  ProfileReader reader(path);
  auto count = [&](const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(reader.db(), sql, -1, &stmt, nullptr), SQLITE_OK) << sql;
    EXPECT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    const auto n = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return n;
  };
  EXPECT_EQ(count("SELECT count(*) FROM slices WHERE run_id IS NULL AND parent_id IS NULL AND "
                  "program_id IS NULL AND phase_id IS NULL AND bytes IS NULL"),
            1);
  EXPECT_EQ(count("SELECT count(*) FROM tracks WHERE parent_id IS NULL AND ipu IS NULL AND "
                  "tile IS NULL"),
            1);
}

TEST(ProfileRoundTrip, ForEachSliceStreamsATrackInTimeOrder) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter writer(path);
    const auto a = writer.addTrack(TrackRow{0, -1, "bsp", "a", 0, -1, 0});
    const auto b = writer.addTrack(TrackRow{0, -1, "bsp", "b", 0, -1, 1});
    for (std::int64_t i = 0; i < 100; ++i) {
      // Written out of order and interleaved with another track.
      writer.addSlice(SliceRow{0, a, 0, (i * 37) % 100 * 10, 5, "s", "compute", 0, -1, -1, -1, -1});
      writer.addSlice(SliceRow{0, b, 0, i, 1, "t", "sync", 0, -1, -1, -1, -1});
    }
    writer.commit();
  }
  ProfileReader reader(path);
  std::vector<std::int64_t> starts;
  reader.forEachSlice(1, [&](const SliceRow& row) {
    EXPECT_EQ(row.trackId, 1);
    starts.push_back(row.ts);
  });
  ASSERT_EQ(starts.size(), 100u);
  for (std::size_t i = 0; i < starts.size(); ++i) EXPECT_EQ(starts[i], static_cast<std::int64_t>(i) * 10);
  EXPECT_EQ(reader.sliceCount(), 200);
  EXPECT_EQ(reader.timeExtent(), std::make_pair(std::int64_t{0}, std::int64_t{995}));
}

TEST(ProfileRoundTrip, ProfileWithoutSlicesHasAnEmptyExtent) {
  ScratchDirectory dir;
  {
    ProfileWriter writer(dir.file("profile.pop"));
    writer.commit();
  }
  ProfileReader reader(dir.file("profile.pop"));
  EXPECT_EQ(reader.sliceCount(), 0);
  EXPECT_EQ(reader.timeExtent(), std::make_pair(std::int64_t{0}, std::int64_t{0}));
  EXPECT_TRUE(reader.slices(1, 0, 100).empty());
  EXPECT_TRUE(reader.runs().empty());
}

TEST(ProfileRoundTrip, ReportDirectoryMeansItsProfilePop) {
  ScratchDirectory dir;
  {
    ProfileWriter writer(dir.file("report/profile.pop"));  // creates report/
    writer.setMeta("workload", "mnist");
    writer.commit();
  }
  ProfileReader reader(dir.file("report"));
  EXPECT_EQ(reader.path(), dir.file("report/profile.pop"));
  EXPECT_EQ(reader.metaValue("workload"), "mnist");
}

}  // namespace
}  // namespace ipusim::traces::profile_round_trip_test
