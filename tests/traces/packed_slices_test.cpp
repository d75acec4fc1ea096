// ProfileReader::readPackedSlices: the packed copy (slice_chunks,
// slice_strings) holds exactly the drawing columns of the slices table, across
// chunk boundaries, with NULL ids and in the writer's order; a profile
// without it says so; a corrupt chunk is an error naming the file.
#include "scratch_directory.hpp"
#include "traces/internal/slice_chunk_codec.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>

namespace ipusim::traces::packed_slices_test {
namespace {

using testing::ScratchDirectory;

void exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

TEST(PackedSlices, HoldTheSameColumnsAsTheSlicesTable) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  constexpr std::int64_t kSlices = 70'000;  // more than one 65,536-slice chunk
  {
    ProfileWriter w(path);
    const auto a = w.addTrack(TrackRow{0, -1, "bsp", "BSP", 0, -1, 0});
    const auto b = w.addTrack(TrackRow{0, -1, "program", "programs", 0, -1, 1});
    for (std::int64_t i = 0; i < kSlices; ++i) {
      w.addSlice(SliceRow{0, a, 0, i * 10, 7, i % 3 ? "compute" : "sync", i % 3 ? "compute" : "sync", 0, -1,
                          i % 5 ? 1 : -1, i % 7 ? i % 11 : -1, -1});
      // The parent written after its child (a profiler learning durations at
      // the end): the packed copy keeps the writer's order.
      if (i % 1000 == 999) {
        w.addSlice(SliceRow{0, b, 0, i * 10 + 2, 3, "child", "program", 1, -1, 4, -1, -1});
        w.addSlice(SliceRow{0, b, 0, i * 10, 9, "parent", "program", 0, -1, 3, -1, -1});
      }
    }
    w.commit();
  }
  ProfileReader reader(path);
  for (std::int64_t track : {1, 2}) {
    PackedSlices packed;
    ASSERT_TRUE(reader.readPackedSlices(track, packed));
    std::vector<SliceRow> rows;
    reader.forEachSlice(track, [&](const SliceRow& s) { rows.push_back(s); });
    ASSERT_EQ(packed.size(), rows.size());
    // Match by id: forEachSlice orders by (ts, depth, id), the packed copy by writing.
    std::map<std::int64_t, std::size_t> byId;
    for (std::size_t i = 0; i < packed.size(); ++i) byId[packed.id[i]] = i;
    for (const auto& row : rows) {
      const std::size_t i = byId.at(row.id);
      EXPECT_EQ(packed.ts[i], row.ts);
      EXPECT_EQ(packed.dur[i], row.dur);
      EXPECT_EQ(packed.depth[i], row.depth);
      EXPECT_EQ(packed.strings.at(packed.name[i]), row.name);
      EXPECT_EQ(packed.strings.at(packed.category[i]), row.category);
      EXPECT_EQ(packed.programId[i], row.programId);
      EXPECT_EQ(packed.phaseId[i], row.phaseId);
    }
  }
  PackedSlices program;
  ASSERT_TRUE(reader.readPackedSlices(2, program));
  ASSERT_EQ(program.size(), 140u);
  EXPECT_EQ(program.strings.at(program.name[0]), "child");  // writing order
  EXPECT_EQ(program.strings.at(program.name[1]), "parent");
}

TEST(PackedSlices, AProfileWithoutThemSaysSo) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter w(path);
    const auto t = w.addTrack(TrackRow{0, -1, "bsp", "BSP", 0, -1, 0});
    w.addSlice(SliceRow{0, t, 0, 0, 5, "x", "compute", 0, -1, -1, -1, -1});
    w.commit();
  }
  exec(path, "DROP TABLE slice_chunks; DROP TABLE slice_strings;");
  ProfileReader reader(path);
  PackedSlices packed;
  EXPECT_FALSE(reader.readPackedSlices(1, packed));
  EXPECT_EQ(packed.size(), 0u);
}

TEST(PackedSlices, ACorruptChunkIsAnErrorNamingTheFile) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter w(path);
    const auto t = w.addTrack(TrackRow{0, -1, "bsp", "BSP", 0, -1, 0});
    for (int i = 0; i < 10; ++i) w.addSlice(SliceRow{0, t, 0, i * 10, 5, "x", "compute", 0, -1, -1, -1, -1});
    w.commit();
  }
  exec(path, "UPDATE slice_chunks SET slice_count = 11");
  ProfileReader reader(path);
  PackedSlices packed;
  try {
    reader.readPackedSlices(1, packed);
    FAIL() << "expected ProfileError";
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("slice_chunks"), std::string::npos) << e.what();
  }
}

// A profile of one track of ten slices whose chunk is replaced by one slice
// (id 1) of the given values, encoded as the writer encodes.
std::string profileWithChunk(const ScratchDirectory& dir, std::int64_t ts, std::int64_t dur, std::int64_t depth) {
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter w(path);
    const auto t = w.addTrack(TrackRow{0, -1, "bsp", "BSP", 0, -1, 0});
    for (int i = 0; i < 10; ++i) w.addSlice(SliceRow{0, t, 0, i * 10, 5, "x", "compute", 0, -1, -1, -1, -1});
    w.commit();
  }
  internal::SliceChunkEncoder encoder;
  encoder.add(1, ts, dur, depth, 0, 0, -1, -1);
  const std::string data = encoder.take();
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "UPDATE slice_chunks SET data = ?1, slice_count = 1", -1, &s, nullptr), SQLITE_OK);
  sqlite3_bind_blob(s, 1, data.data(), int(data.size()), SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(s), SQLITE_DONE);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return path;
}

std::string packedReadError(const std::string& path) {
  ProfileReader reader(path);
  PackedSlices packed;
  try {
    reader.readPackedSlices(1, packed);
  } catch (const ProfileError& e) {
    return e.what();
  }
  return "read " + std::to_string(packed.size()) + " slices";
}

TEST(PackedSlices, ASliceOutsideTheRulesOfSlicesIsRefused) {
  // The blob holds what check 6 cannot see: its slices are held to the
  // rules of slices.ts, dur and depth where they are read (the viewer drew a
  // depth of 70,000 and a start of -1,000).
  struct Case {
    std::int64_t ts, dur, depth;
    const char* expected;
  };
  for (const Case& c : {Case{0, 5, 70'000, "slice 1 has depth 70000; expected an integer from 0 to 65535"},
                        Case{-1000, 5, 0, "slice 1 has ts -1000; expected an integer from 0 to 4611686018427387904"},
                        Case{0, (std::int64_t(1) << 62) + 5, 0, "slice 1 has dur 4611686018427387909"}}) {
    ScratchDirectory dir;
    const std::string path = profileWithChunk(dir, c.ts, c.dur, c.depth);
    const std::string error = packedReadError(path);
    EXPECT_NE(error.find(path + ": corrupt slice_chunks of track 1: " + c.expected), std::string::npos) << error;
  }
}

TEST(PackedSlices, AValueTooWideForItsColumnIsRefusedNotCut) {
  // A depth of 2^40 was cut to the 32 bits of its column: read as 0.
  ScratchDirectory dir;
  const std::string path = profileWithChunk(dir, 0, 5, std::int64_t(1) << 40);
  const std::string error = packedReadError(path);
  EXPECT_NE(error.find(path + ": corrupt slice_chunks row: slice 1 holds a value too wide for its column"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace ipusim::traces::packed_slices_test
