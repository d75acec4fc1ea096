// The profiles of one run's instances read as one system
// (profiler/analysis/instance_profiles.hpp): each IPU's rows from the
// instance that holds it, the rest from instance 0; and the sets refused.
// tests/mpi_run/check compares a real run's combined profiles with one
// process's, report for report and trace for trace.
#include "profiler/analysis/instance_profiles.hpp"
#include "profiler/analysis/report.hpp"
#include "test_analysis_profile.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

namespace ipusim::test_instance_profiles {
namespace {

namespace fs = std::filesystem;
using testing_profiles::slice;

// Instance `rank` of `instances`, holding IPU `rank` of a system of one IPU per instance (2 tiles each):
// an engine track with one run, its IPU's programs track (a parent slice and a child) and a tile's memory.
// `changed`: meta values to write instead (an empty one: the key left out).
void writeInstance(const fs::path& dir, int rank, int instances,
                   const std::map<std::string, std::string>& changed = {}) {
  traces::ProfileWriter w((dir / ("profile.rank" + std::to_string(rank) + ".pop")).string());
  std::map<std::string, std::string> meta = {{"workload", "instances"},
                                             {"num_ipus", std::to_string(instances)},
                                             {"tiles_per_ipu", "2"},
                                             {"clock_hz", "1000000000"},
                                             {"job_end_cycle", "1000"},
                                             {"instance", std::to_string(rank)},
                                             {"instances", std::to_string(instances)},
                                             {"instance_first_ipu", std::to_string(rank)},
                                             {"instance_ipus", "1"}};
  for (const auto& [key, value] : changed) meta[key] = value;
  for (const auto& [key, value] : meta)
    if (!value.empty()) w.setMeta(key, value);
  w.addRun({0, 0, "main", 0, 1000, 1, true});
  const std::int64_t engine = w.addTrack({0, -1, "engine", "Engine::run", -1, -1, 0});
  slice(w, engine, 0, 0, 1000, "Engine::run #0", "engine_run");
  const std::string ipu = "IPU " + std::to_string(rank);
  const std::int64_t group = w.addTrack({0, -1, "ipu", ipu, rank, -1, 30 + 10 * rank});
  const std::int64_t programs = w.addTrack({0, group, "program", ipu + " programs", rank, -1, 31 + 10 * rank});
  const std::int64_t parent = slice(w, programs, 0, 100, 500, "step", "program");
  slice(w, programs, 0, 100 + rank, 10, "compute " + std::to_string(rank), "compute", parent, 1);
  w.addTileMemoryPeak({rank, 2 * rank, 100 + rank, 100 + rank, 0});
  w.commit();
}

fs::path freshDirectory(const std::string& name) {
  const fs::path dir = testing_profiles::temporaryPath(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(InstanceProfiles, CombinedProfileHoldsEveryInstancesIpusAndInstanceZerosTheRest) {
  const fs::path dir = freshDirectory("two");
  writeInstance(dir, 0, 2);
  writeInstance(dir, 1, 2);
  const profiler::analysis::ProfileSource source(dir.string());
  EXPECT_EQ(source.instances(), 2u);
  EXPECT_EQ(source.named(), dir.string());
  const traces::ProfileReader reader(source.path());
  EXPECT_EQ(reader.metaValue("instances"), "2");
  EXPECT_EQ(reader.metaValue("instance"), "");
  EXPECT_EQ(reader.metaValue("instance_ipus"), "");  // the combination holds every IPU
  std::vector<std::string> names;
  std::int64_t engines = 0;
  for (const auto& track : reader.tracks()) {
    names.push_back(track.name);
    engines += track.kind == "engine";
    if (track.kind != "program") continue;
    const auto slices = reader.slices(track.id, 0, 2000);
    ASSERT_EQ(slices.size(), 2u) << track.name;
    EXPECT_EQ(slices[1].name, "compute " + std::to_string(track.ipu));
    EXPECT_EQ(slices[1].parentId, slices[0].id) << track.name << ": a child keeps its parent";
  }
  EXPECT_EQ(engines, 1);
  EXPECT_EQ(names, (std::vector<std::string>{"Engine::run", "IPU 0", "IPU 0 programs", "IPU 1", "IPU 1 programs"}));
  const auto peaks = reader.tileMemoryPeaks();
  ASSERT_EQ(peaks.size(), 2u);
  EXPECT_EQ(peaks[1].tile, 2);
  EXPECT_EQ(peaks[1].peakBytes, 101);
  const auto report = profiler::analysis::buildReport(reader, {});
  EXPECT_EQ(report.target.ipusHeld, 2);
  EXPECT_EQ(report.memory.tiles, 4);
}

TEST(InstanceProfiles, OneInstancesProfileHoldsItsIpus) {
  const fs::path dir = freshDirectory("one_read_alone");
  writeInstance(dir, 0, 2);
  writeInstance(dir, 1, 2);
  const traces::ProfileReader reader((dir / "profile.rank1.pop").string());
  const auto report = profiler::analysis::buildReport(reader, {});
  EXPECT_EQ(report.target.firstIpu, 1);
  EXPECT_EQ(report.target.ipusHeld, 1);
  EXPECT_EQ(report.memory.tiles, 2) << "its mean is over its own tiles";
}

TEST(InstanceProfiles, TemporaryCombinationRemovedWithItsSource) {
  const fs::path dir = freshDirectory("removed");
  writeInstance(dir, 0, 1);
  std::string combined;
  {
    const profiler::analysis::ProfileSource source(dir.string());
    combined = source.path();
    EXPECT_TRUE(fs::exists(combined));
    EXPECT_NE(combined, dir.string());
  }
  EXPECT_FALSE(fs::exists(combined));
}

TEST(InstanceProfiles, ProfileOrReportDirectoryReadAsItIs) {
  const fs::path dir = freshDirectory("plain");
  testing_profiles::writeKnownProfile((dir / "profile.pop").string());
  EXPECT_EQ(profiler::analysis::ProfileSource(dir.string()).path(), dir.string());
  EXPECT_EQ(profiler::analysis::ProfileSource((dir / "profile.pop").string()).instances(), 0u);
  // A report directory holding profile.pop and an instance's profile is a one-process report directory.
  writeInstance(dir, 0, 2);
  EXPECT_FALSE(profiler::analysis::findInstanceProfiles(dir.string()));
}

TEST(InstanceProfiles, MissingOrExtraInstanceRefusedNamingIt) {
  const fs::path dir = freshDirectory("missing");
  writeInstance(dir, 0, 3);
  writeInstance(dir, 2, 3);
  EXPECT_NE(errorOf([&] { profiler::analysis::ProfileSource source(dir.string()); })
                .find("profile.rank1.pop is missing: expected the profiles of the 3 instances profile.rank0.pop names"),
            std::string::npos);
  const fs::path extra = freshDirectory("extra");
  writeInstance(extra, 0, 1);
  writeInstance(extra, 1, 2);
  EXPECT_NE(errorOf([&] { profiler::analysis::ProfileSource source(extra.string()); })
                .find("profile.rank1.pop is there, but profile.rank0.pop names 1 instances"),
            std::string::npos);
}

TEST(InstanceProfiles, InstancesOfOtherRunsRefusedNamingTheValue) {
  const fs::path dir = freshDirectory("other_run");
  writeInstance(dir, 0, 2);
  writeInstance(dir, 1, 2, {{"job_end_cycle", "999"}});
  const std::string error = errorOf([&] { profiler::analysis::ProfileSource source(dir.string()); });
  EXPECT_NE(error.find("profile.rank1.pop: meta job_end_cycle '999' where"), std::string::npos) << error;
  EXPECT_NE(error.find("has '1000': expected the profiles of one run's instances"), std::string::npos) << error;
}

TEST(InstanceProfiles, RankProfilesThatHoldEveryIpuRefused) {
  // As an ipusim before this one wrote them: every rank's profile held every IPU, without instance_ipus.
  const fs::path dir = freshDirectory("older");
  writeInstance(dir, 0, 2, {{"instance_first_ipu", ""}, {"instance_ipus", ""}});
  writeInstance(dir, 1, 2, {{"instance_first_ipu", ""}, {"instance_ipus", ""}});
  const std::string error = errorOf([&] { profiler::analysis::ProfileSource source(dir.string()); });
  EXPECT_NE(error.find("profile.rank0.pop: no meta instance_ipus: written when every rank's profile held every IPU"),
            std::string::npos)
      << error;
}

TEST(InstanceProfiles, IpusThatDoNotCoverTheSystemRefused) {
  const fs::path dir = freshDirectory("ipus");
  writeInstance(dir, 0, 2);
  writeInstance(dir, 1, 2, {{"instance_first_ipu", "0"}});
  const std::string error = errorOf([&] { profiler::analysis::ProfileSource source(dir.string()); });
  EXPECT_NE(error.find("profile.rank1.pop: its IPUs begin at 0, expected 1"), std::string::npos) << error;
  const fs::path beyond = freshDirectory("beyond");
  writeInstance(beyond, 0, 1, {{"instance_ipus", "2"}});
  EXPECT_NE(errorOf([&] { profiler::analysis::ProfileSource source(beyond.string()); })
                .find("meta instance_first_ipu 0 and instance_ipus 2: expected IPUs within num_ipus (1)"),
            std::string::npos);
}

}  // namespace
}  // namespace ipusim::test_instance_profiles
