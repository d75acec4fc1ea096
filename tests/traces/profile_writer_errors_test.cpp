// ProfileWriter failures: each throws ProfileError naming the file and the
// cause, and none leaves a file behind.
#include "scratch_directory.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <sys/resource.h>
#include <unistd.h>

namespace ipusim::traces::profile_writer_errors_test {
namespace {

using testing::ScratchDirectory;
namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ProfileWriterErrors, UnwritableDirectory) {
  ScratchDirectory dir;
  const fs::path readOnly = dir.path() / "read-only";
  fs::create_directories(readOnly);
  fs::permissions(readOnly, fs::perms::owner_read | fs::perms::owner_exec |
                                fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  const std::string path = (readOnly / "profile.pop").string();
  // Root ignores directory permissions: the child drops to an unprivileged
  // user first, so the test means the same under CI containers and desktops.
  EXPECT_EXIT(
      {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) std::_Exit(2);
        try {
          ProfileWriter writer(path);
        } catch (const ProfileError& error) {
          std::fprintf(stderr, "%s\n", error.what());
          std::_Exit(3);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(3), "cannot create temporary file .*: directory .*read-only is not writable \\(Permission denied\\)");
  EXPECT_TRUE(fs::is_empty(readOnly));
}

TEST(ProfileWriterErrors, ParentPathIsAFile) {
  ScratchDirectory dir;
  std::ofstream(dir.file("report")) << "a file, not a directory";
  const std::string path = dir.file("report/profile.pop");
  try {
    ProfileWriter writer(path);
    FAIL() << "expected a ProfileError";
  } catch (const ProfileError& error) {
    EXPECT_TRUE(contains(error.what(), path + ": cannot create directory " + dir.file("report")))
        << error.what();
  }
}

TEST(ProfileWriterErrors, PathIsADirectory) {
  ScratchDirectory dir;
  try {
    ProfileWriter writer(dir.path().string());
    FAIL() << "expected a ProfileError";
  } catch (const ProfileError& error) {
    EXPECT_TRUE(contains(error.what(), "is a directory")) << error.what();
  }
}

TEST(ProfileWriterErrors, DiskFullIsReportedAndLeavesNoFile) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  // A file size limit stands in for a full disk; writes beyond it fail (with
  // SIGXFSZ ignored) as they would on a full file system.
  std::signal(SIGXFSZ, SIG_IGN);
  const rlimit limit{1 << 20, 1 << 20};
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::string message;
  try {
    ProfileWriter writer(path);
    const auto track = writer.addTrack(TrackRow{0, -1, "bsp", "BSP", 0, -1, 0});
    // 200k slices of ~100 bytes: 20 MB, far beyond the limit and the cache.
    const std::string name(64, 'n');
    for (int i = 0; i < 200'000; ++i)
      writer.addSlice(SliceRow{0, track, 0, i, 1, name, "compute", 0, -1, -1, -1, -1});
    writer.commit();
  } catch (const ProfileError& error) {
    message = error.what();
  }
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  EXPECT_TRUE(contains(message, "disk is full") || contains(message, "disk I/O error")) << message;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ProfileWriterErrors, ReservedMetaKeysAreRefused) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  ProfileWriter writer(path);
  for (const char* key : {"schema_version", "complete"}) {
    try {
      writer.setMeta(key, "9");
      FAIL() << "setting " << key << " must throw";
    } catch (const ProfileError& error) {
      EXPECT_EQ(std::string(error.what()),
                path + ": meta key '" + key + "' is written by the profile writer itself and cannot be set");
    }
  }
  writer.commit();  // a refused key does not spoil the profile
  EXPECT_EQ(ProfileReader(path).metaValue("schema_version"), std::to_string(kSchemaVersion));
}

TEST(ProfileWriterErrors, NegativeTimesAreRefused) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  ProfileWriter writer(path);
  try {
    writer.addSlice(SliceRow{0, 1, 0, 10, -5, "backwards", "compute", 0, -1, -1, -1, -1});
    FAIL() << "a negative duration must throw";
  } catch (const ProfileError& error) {
    EXPECT_EQ(std::string(error.what()),
              path + ": slice 'backwards' on track 1 has ts 10 and dur -5; expected non-negative "
                     "device cycles");
  }
  EXPECT_THROW(writer.addRun(RunRow{0, 0, "main", 100, 50, 1, true}), ProfileError);
  EXPECT_EQ(writer.slicesWritten(), 0u);
}

TEST(ProfileWriterErrors, DuplicateIdsNameTheRowAndStopTheWriter) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  ProfileWriter writer(path);
  writer.addTrack(TrackRow{5, -1, "host", "host", -1, -1, 0});
  try {
    writer.addTrack(TrackRow{5, -1, "host", "again", -1, -1, 0});
    FAIL() << "a duplicate track id must throw";
  } catch (const ProfileError& error) {
    EXPECT_TRUE(contains(error.what(), path + ": cannot add track 5 'again': UNIQUE constraint failed"))
        << error.what();
  }
  // A failed writer never produces a profile: the temporary file is gone and
  // later calls say why.
  EXPECT_TRUE(dir.entries().empty());
  try {
    writer.commit();
    FAIL() << "commit after a failure must throw";
  } catch (const ProfileError& error) {
    EXPECT_TRUE(contains(error.what(), "abandoned after an error")) << error.what();
  }
  EXPECT_FALSE(fs::exists(path));
}

// Slices are inserted in batches, so a duplicate id surfaces when its batch
// is written (at the latest at commit); the message names the rows.
TEST(ProfileWriterErrors, DuplicateSliceIdIsReportedByTheFlushThatWritesIt) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  ProfileWriter writer(path);
  writer.addSlice(SliceRow{7, 1, 0, 0, 1, "first", "compute", 0, -1, -1, -1, -1});
  writer.addSlice(SliceRow{7, 1, 0, 5, 1, "second", "compute", 0, -1, -1, -1, -1});
  try {
    writer.commit();
    FAIL() << "a duplicate slice id must throw";
  } catch (const ProfileError& error) {
    EXPECT_EQ(std::string(error.what()),
              path + ": cannot add slice 7 'second': UNIQUE constraint failed: slices.id");
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ProfileWriterErrors, DuplicateSliceIdInAFullBatchNamesTheBatchIds) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  ProfileWriter writer(path);
  writer.addSlice(SliceRow{3, 1, 0, 0, 1, "early", "compute", 0, -1, -1, -1, -1});
  std::string message;
  try {
    // Automatic ids continue after the explicit 3 (4, 5, ...); a second
    // explicit 3 breaks the first full batch: rows 3, 4, 3, 5..65.
    writer.addSlice(SliceRow{0, 1, 0, 1, 1, "auto", "compute", 0, -1, -1, -1, -1});
    writer.addSlice(SliceRow{3, 1, 0, 2, 1, "again", "compute", 0, -1, -1, -1, -1});
    for (int i = 0; i < 200; ++i)
      writer.addSlice(SliceRow{0, 1, 0, 3 + i, 1, "auto", "compute", 0, -1, -1, -1, -1});
  } catch (const ProfileError& error) {
    message = error.what();
  }
  EXPECT_EQ(message, path + ": cannot add slices 3..65: UNIQUE constraint failed: slices.id");
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ProfileWriterErrors, EmptyPath) {
  EXPECT_THROW(ProfileWriter(""), ProfileError);
}

}  // namespace
}  // namespace ipusim::traces::profile_writer_errors_test
