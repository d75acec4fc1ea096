// Mirrored replicas end to end (model/ir/replica_mirror.hpp): `ipusim run
// --synthetic-data` of the replicated tutorial (plain or pipelined) compiles one replica's program
// and mirrors it; `--full-replicas` lays out and times every replica. Both
// profiles must hold the same slices on every track (every IPU's BSP lane,
// programs, tiles, streams, host), the same tile figures of every static
// phase, and the same program work; only meta replicas_mirrored differs.
#include "cli_helpers.hpp"
#include "traces/profile_reader.hpp"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace ipusim::test::test_replica_mirror_profile {
namespace {

using SliceKey = std::tuple<std::int64_t, std::int64_t, std::string, std::string, std::int64_t, std::int64_t>;

// Every slice by (track name path, ipu): ts, dur, name, category, program, bytes.
std::map<std::string, std::vector<SliceKey>> slicesByTrack(const traces::ProfileReader& reader) {
  std::map<std::string, std::vector<SliceKey>> out;
  for (const auto& track : reader.tracks()) {
    auto& rows = out[track.kind + "/" + track.name + "/ipu" + std::to_string(track.ipu) + "/tile" +
                     std::to_string(track.tile)];
    reader.forEachSlice(track.id, [&](const traces::SliceRow& s) {
      rows.emplace_back(s.ts, s.dur, s.name, s.category, s.programId, s.bytes);
    });
  }
  return out;
}

// The replicated tutorial, or (`pipelined`) the pipelined one: 2 IPUs a replica.
struct Job {
  std::uint32_t ipus = 2;
  bool pipelined = false;
  std::uint32_t ipusPerPod = 0;  // PODs joined by GW-Links (ipu.ipus_per_pod); 0: one
};

void writeProfile(const ScratchDir& dir, const Job& job, const std::string& extra) {
  const std::string options = "{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.str() +
                              "\",\"debug.computeInstrumentationLevel\":\"tile\"}";
  const std::string workload = job.pipelined ? "workloads/mnist_pipelined_2ipus.json --steps 32 --steps-per-execution 16"
                                             : "workloads/mnist_replicated_4ipus.json --steps 4 --steps-per-execution 2";
  const auto r = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + ipusimBinary() + " run " + workload +
                            " --synthetic-data --workload-set ipu.num_ipus=" + std::to_string(job.ipus) +
                            " --workload-set ipu.ipus_per_pod=" + std::to_string(job.ipusPerPod) +
                            " --engine-options " + quote(options) + " " + extra);
  ASSERT_EQ(r.exitCode, 0) << r.output;
}

void expectSameProfiles(const Job& job) {
  const std::string tag = std::to_string(job.ipus) + (job.pipelined ? "-pipelined" : "") +
                          (job.ipusPerPod ? "-pods" : "");
  ScratchDir mirroredDir("mirror-" + tag), fullDir("full-" + tag);
  writeProfile(mirroredDir, job, "");
  writeProfile(fullDir, job, "--full-replicas");
  const traces::ProfileReader mirrored(mirroredDir.str()), full(fullDir.str());
  EXPECT_EQ(mirrored.metaValue("replicas_mirrored"), "true");
  EXPECT_EQ(full.metaValue("replicas_mirrored"), "false");
  EXPECT_EQ(mirrored.metaValue("job_end_cycle"), full.metaValue("job_end_cycle"));

  const auto a = slicesByTrack(full), b = slicesByTrack(mirrored);
  ASSERT_EQ(a.size(), b.size());
  std::size_t ipuTracks = 0;
  for (const auto& [track, rows] : a) {
    ASSERT_TRUE(b.count(track)) << track;
    EXPECT_EQ(b.at(track), rows) << track;
    ipuTracks += track.rfind("bsp/", 0) == 0 && !rows.empty();
  }
  EXPECT_EQ(ipuTracks, job.ipus);  // every IPU's BSP lane has its phases

  const auto phasesA = full.phases(), phasesB = mirrored.phases();
  ASSERT_EQ(phasesA.size(), phasesB.size());
  for (std::size_t i = 0; i < phasesA.size(); ++i) {
    EXPECT_EQ(phasesB[i].name, phasesA[i].name);
    EXPECT_EQ(phasesB[i].bytes, phasesA[i].bytes) << phasesA[i].name;
    const auto tilesA = full.tilePhases(phasesA[i].id), tilesB = mirrored.tilePhases(phasesB[i].id);
    ASSERT_EQ(tilesA.size(), tilesB.size()) << phasesA[i].name;
    for (std::size_t t = 0; t < tilesA.size(); ++t) {
      EXPECT_EQ(tilesB[t].tile, tilesA[t].tile) << phasesA[i].name;
      EXPECT_EQ(tilesB[t].cycles, tilesA[t].cycles) << phasesA[i].name << " tile " << tilesA[t].tile;
      EXPECT_EQ(tilesB[t].vertices, tilesA[t].vertices) << phasesA[i].name << " tile " << tilesA[t].tile;
    }
  }
  const auto workA = full.programWork(), workB = mirrored.programWork();
  ASSERT_EQ(workA.size(), workB.size());
  for (std::size_t i = 0; i < workA.size(); ++i) {
    EXPECT_EQ(workB[i].flops, workA[i].flops) << "program " << workA[i].programId;
    EXPECT_EQ(workB[i].vertices, workA[i].vertices) << "program " << workA[i].programId;
    EXPECT_EQ(workB[i].tiles, workA[i].tiles) << "program " << workA[i].programId;
  }
}

TEST(ReplicaMirrorProfile, TwoReplicasProfileExactlyAsTheFullLayout) { expectSameProfiles({2, false}); }
TEST(ReplicaMirrorProfile, FourReplicasProfileExactlyAsTheFullLayout) { expectSameProfiles({4, false}); }
// Pipelined replicas (2 stages on 2 IPUs each) are mirrored as plain ones are.
TEST(ReplicaMirrorProfile, PipelinedReplicasProfileExactlyAsTheFullLayout) { expectSameProfiles({4, true}); }
TEST(ReplicaMirrorProfile, FourPipelinedReplicasProfileExactlyAsTheFullLayout) { expectSameProfiles({8, true}); }
// Replicas in 2 PODs of 4 IPUs: the all-reduce over the GW-Links times the same either way.
TEST(ReplicaMirrorProfile, ReplicasInTwoPodsProfileExactlyAsTheFullLayout) { expectSameProfiles({8, false, 4}); }

TEST(ReplicaMirrorProfile, SerializingTheGraphLaysOutEveryReplica) {
  ScratchDir dir("mirror-serialized");
  const std::string options = "{\"autoReport.outputSerializedGraph\":\"true\",\"autoReport.directory\":\"" +
                              dir.str() + "\"}";
  const auto r = runCommand("cd " + quote(IPUSIM_SOURCE_DIR) + " && " + ipusimBinary() +
                            " run workloads/mnist_replicated_4ipus.json --synthetic-data --steps 2 "
                            "--steps-per-execution 2 --workload-set ipu.num_ipus=2 --engine-options " + quote(options));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "serialized_graph.json"));
}

}  // namespace
}  // namespace ipusim::test::test_replica_mirror_profile
