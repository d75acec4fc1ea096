// ProfileReader refuses anything that is not a complete ipusim profile of a
// schema version it understands, with a message naming the file and why.
#include "scratch_directory.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

namespace ipusim::traces::profile_reader_errors_test {
namespace {

using testing::ScratchDirectory;
namespace fs = std::filesystem;

// The message of the ProfileError that opening `path` throws.
std::string openError(const std::string& path) {
  try {
    ProfileReader reader(path);
  } catch (const ProfileError& error) {
    return error.what();
  }
  ADD_FAILURE() << "opening " << path << " did not throw";
  return {};
}

// Builds an SQLite file by hand with the given SQL.
void makeSqliteFile(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << message;
  sqlite3_close(db);
}

void writeProfileWithSlices(const std::string& path, int sliceCount) {
  ProfileWriter writer(path);
  const auto track = writer.addTrack(TrackRow{0, -1, "bsp", "BSP", 0, -1, 0});
  for (int i = 0; i < sliceCount; ++i)
    writer.addSlice(SliceRow{0, track, 0, i * 10, 10, "compute set " + std::to_string(i),
                             "compute", 0, -1, -1, -1, -1});
  writer.commit();
}

TEST(ProfileReaderErrors, MissingFile) {
  ScratchDirectory dir;
  const std::string path = dir.file("absent.pop");
  EXPECT_EQ(openError(path), path + ": no such profile file");
}

TEST(ProfileReaderErrors, DirectoryWithoutProfilePop) {
  ScratchDirectory dir;
  EXPECT_EQ(openError(dir.path().string()), dir.path().string() + ": report directory has no profile.pop");
}

// An mpirun run's report directory holds a profile per rank and no
// profile.pop: the error names them and what to give (adversarial pass 23:
// it said only "has no profile.pop").
TEST(ProfileReaderErrors, DirectoryOfRankProfilesNamesThem) {
  ScratchDirectory dir;
  for (const char* name : {"profile.rank1.pop", "profile.rank0.pop", "profile.rank10.pop", "profile.rankx.pop"})
    std::ofstream(dir.file(name)) << "x";
  EXPECT_EQ(openError(dir.path().string()),
            dir.path().string() + ": report directory has no profile.pop; it holds 3 ranks' profiles of an mpirun "
                                  "run (profile.rank0.pop to profile.rank10.pop): name one (its rank's IPUs), e.g. " +
                dir.file("profile.rank0.pop") + ", or combine them with `ipusim combine " + dir.path().string() +
                " -o FILE`");
}

TEST(ProfileReaderErrors, NotAnSqliteFile) {
  ScratchDirectory dir;
  const std::string path = dir.file("notes.pop");
  std::ofstream(path) << std::string(4096, 'x');
  EXPECT_EQ(openError(path), path + ": not an SQLite database (file is not a database)");
}

TEST(ProfileReaderErrors, TruncatedProfile) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  writeProfileWithSlices(path, 20'000);
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 4u * 65536u);
  fs::resize_file(path, size / 2);
  EXPECT_EQ(openError(path), path + ": corrupt or truncated profile (database disk image is malformed)");
  fs::resize_file(path, 50);  // not even a whole header
  EXPECT_EQ(openError(path), path + ": corrupt or truncated profile (database disk image is malformed)");
}

TEST(ProfileReaderErrors, CorruptPageIsReportedWhenRead) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  writeProfileWithSlices(path, 20'000);
  {
    // Overwrite a page in the middle (slice rows or their index, both read
    // by forEachSlice) with garbage: the header and schema page stay valid,
    // so opening succeeds and the damage shows when the rows are read.
    const auto pageSize = 65536u;
    const auto middlePage = fs::file_size(path) / pageSize / 2;
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(middlePage * pageSize));
    const std::string garbage(65536, '\xA5');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  try {
    ProfileReader reader(path);
    std::int64_t seen = 0;
    reader.forEachSlice(1, [&](const SliceRow&) { ++seen; });
    FAIL() << "reading a corrupt profile did not throw (" << seen << " slices)";
  } catch (const ProfileError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("corrupt"), std::string::npos) << message;
  }
}

TEST(ProfileReaderErrors, SqliteFileThatIsNotAProfile) {
  ScratchDirectory dir;
  const std::string path = dir.file("other.db");
  makeSqliteFile(path, "CREATE TABLE people(name TEXT);");
  EXPECT_EQ(openError(path), path + ": not an ipusim profile (the database has no meta table)");
}

TEST(ProfileReaderErrors, EmptyFile) {
  ScratchDirectory dir;
  const std::string path = dir.file("empty.pop");
  std::ofstream{path};
  EXPECT_EQ(openError(path), path + ": empty file, not an ipusim profile");
}

TEST(ProfileReaderErrors, MetaTableWithoutSchemaVersion) {
  ScratchDirectory dir;
  const std::string path = dir.file("other.db");
  makeSqliteFile(path, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                       "INSERT INTO meta VALUES ('complete', '1');");
  EXPECT_EQ(openError(path), path + ": not an ipusim profile (meta has no schema_version)");
}

TEST(ProfileReaderErrors, NewerSchemaVersion) {
  ScratchDirectory dir;
  const std::string path = dir.file("future.pop");
  makeSqliteFile(path, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                       "INSERT INTO meta VALUES ('schema_version', '99'), ('complete', '1');");
  EXPECT_EQ(openError(path), path + ": schema version 99 is newer than this build supports (" +
                                 std::to_string(kSchemaVersion) + "); open it with a newer ipusim");
}

TEST(ProfileReaderErrors, MalformedSchemaVersion) {
  ScratchDirectory dir;
  const std::string path = dir.file("odd.pop");
  makeSqliteFile(path, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                       "INSERT INTO meta VALUES ('schema_version', 'one'), ('complete', '1');");
  EXPECT_EQ(openError(path), path + ": meta schema_version is 'one'; expected a positive integer");
}

TEST(ProfileReaderErrors, IncompleteProfile) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  // What a run killed before commit would leave if it had written in place.
  makeSqliteFile(path, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                       "INSERT INTO meta VALUES ('schema_version', '" + std::to_string(kSchemaVersion) + "');");
  EXPECT_EQ(openError(path), path + ": incomplete profile (meta has no complete=1): the run that "
                                    "wrote it did not finish");
}

TEST(ProfileReaderErrors, OlderSchemaVersion) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  makeSqliteFile(path, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                       "INSERT INTO meta VALUES ('schema_version', '1'), ('complete', '1');");
  EXPECT_EQ(openError(path), path + ": schema version 1 is older than this build reads (" +
                                 std::to_string(kSchemaVersion) + "): write the profile again with this ipusim");
}

TEST(ProfileReaderErrors, OpensReadOnly) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  writeProfileWithSlices(path, 3);
  ProfileReader reader(path);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(reader.db(), "DELETE FROM slices", nullptr, nullptr, &message),
            SQLITE_READONLY);
  sqlite3_free(message);
  EXPECT_EQ(reader.sliceCount(), 3);
}

}  // namespace
}  // namespace ipusim::traces::profile_reader_errors_test
