// A profile on disk is complete or absent: the writer works on
// "<path>.tmp-<pid>" and renames it onto the path only at commit.
#include "scratch_directory.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace ipusim::traces::profile_temporary_file_test {
namespace {

using testing::ScratchDirectory;
namespace fs = std::filesystem;

std::string temporaryName() { return "profile.pop.tmp-" + std::to_string(::getpid()); }

TEST(ProfileTemporaryFile, NothingAtThePathUntilCommitThenOnlyTheProfile) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  ProfileWriter writer(path);
  const auto track = writer.addTrack(TrackRow{0, -1, "host", "host", -1, -1, 0});
  writer.addSlice(SliceRow{0, track, -1, 0, 5, "wait", "host", 0, -1, -1, -1, -1});
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{temporaryName()});
  writer.commit();
  EXPECT_TRUE(fs::exists(path));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"profile.pop"});
  EXPECT_EQ(ProfileReader(path).sliceCount(), 1);
}

TEST(ProfileTemporaryFile, DestroyingAnUncommittedWriterLeavesNothing) {
  ScratchDirectory dir;
  {
    ProfileWriter writer(dir.file("profile.pop"));
    writer.setMeta("workload", "mnist");
    EXPECT_EQ(dir.entries(), std::vector<std::string>{temporaryName()});
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ProfileTemporaryFile, AbandonRemovesTheTemporaryFileAndRefusesFurtherRows) {
  ScratchDirectory dir;
  ProfileWriter writer(dir.file("profile.pop"));
  writer.abandon();
  EXPECT_TRUE(dir.entries().empty());
  EXPECT_THROW(writer.addTrack(TrackRow{}), ProfileError);
  try {
    writer.commit();
    FAIL() << "commit after abandon must throw";
  } catch (const ProfileError& error) {
    EXPECT_NE(std::string(error.what()).find("abandoned"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ProfileTemporaryFile, AnUncommittedWriterKeepsAnEarlierProfileIntact) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  {
    ProfileWriter first(path);
    first.setMeta("workload", "first");
    first.commit();
  }
  {
    ProfileWriter second(path);
    second.setMeta("workload", "second");
  }  // interrupted: never committed
  EXPECT_EQ(ProfileReader(path).metaValue("workload"), "first");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"profile.pop"});
}

TEST(ProfileTemporaryFile, CommitReplacesAnEarlierProfile) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  for (const char* workload : {"first", "second"}) {
    ProfileWriter writer(path);
    writer.setMeta("workload", workload);
    writer.commit();
  }
  EXPECT_EQ(ProfileReader(path).metaValue("workload"), "second");
}

TEST(ProfileTemporaryFile, LeftoversOfDeadProcessesAreRemovedOnTheNextRun) {
  ScratchDirectory dir;
  // A pid above the kernel's pid_max (at most 2^22) cannot be alive.
  const std::string stale = dir.file("profile.pop.tmp-99999999");
  const std::string unrelated = dir.file("other.pop.tmp-99999999");
  std::ofstream(stale) << "half-written";
  std::ofstream(unrelated) << "not ours";
  ProfileWriter writer(dir.file("profile.pop"));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(unrelated));
}

TEST(ProfileTemporaryFile, ALiveProcessWritingThePathKeepsItsFileAndRefusesASecondWriter) {
  ScratchDirectory dir;
  const std::string live = dir.file("profile.pop.tmp-" + std::to_string(::getppid()));
  std::ofstream(live) << "another run is writing";
  try {
    ProfileWriter writer(dir.file("profile.pop"));
    FAIL() << "a second run writing the same profile must be refused";
  } catch (const ProfileError& error) {
    EXPECT_NE(std::string(error.what()).find("another run (process " + std::to_string(::getppid()) + ")"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(fs::exists(live));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);  // ours is gone
}

TEST(ProfileTemporaryFile, ASecondWriterOfTheSamePathInOneProcessIsRefused) {
  ScratchDirectory dir;
  const std::string path = dir.file("profile.pop");
  ProfileWriter first(path);
  first.setMeta("workload", "first");
  try {
    ProfileWriter second(path);
    FAIL() << "two writers of one path must not share a temporary file";
  } catch (const ProfileError& error) {
    EXPECT_EQ(std::string(error.what()), path + ": another ProfileWriter of this process is writing it");
  }
  first.commit();  // the refused writer did not touch the first one's file
  EXPECT_EQ(ProfileReader(path).metaValue("workload"), "first");
  ProfileWriter third(path);  // released at commit: the path can be written again
  third.commit();
}

TEST(ProfileTemporaryFile, CommitTwiceIsAnError) {
  ScratchDirectory dir;
  ProfileWriter writer(dir.file("profile.pop"));
  writer.commit();
  EXPECT_THROW(writer.commit(), ProfileError);
  EXPECT_THROW(writer.setMeta("k", "v"), ProfileError);
  writer.abandon();  // after commit: a no-op, the profile stays
  EXPECT_TRUE(fs::exists(dir.file("profile.pop")));
}

}  // namespace
}  // namespace ipusim::traces::profile_temporary_file_test
