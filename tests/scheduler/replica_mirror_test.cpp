// Mirrored replicas (model/ir/replica_mirror.hpp): in timing-only mode the
// compiler keeps one replica's compute sets and Copies and the machine model
// expands their timing to every replica. Every phase the simulator waits for
// (each compute set's cycles per IPU and per tile, each exchange's cycles,
// IPUs, link use and bytes per IPU and per tile) must equal the full
// layout's, for 2 and 4 replicas, one IPU or two (sharded) per replica.
#include "training_harness.hpp"

#include "model/hardware/loaded_executable.hpp"
#include "scheduler/compiler.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

namespace ipusim::testing::replica_mirror_test {
namespace {

scheduler::CompiledWorkload compiled(scheduler::Workload w, bool mirror) {
  w.mirrorReplicas = mirror;
  return scheduler::compile(w);
}

scheduler::Workload tutorial(std::uint32_t numIpus) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/mnist_replicated_4ipus.json"));
  w.ipu.numIpus = numIpus;
  return w;
}

// small_synthetic with its last layer on a second IPU: a replica of 2 IPUs.
scheduler::Workload shardedSmall(std::uint32_t numIpus) {
  auto w = scheduler::loadWorkload(sourcePath("workloads/small_synthetic.json"));
  w.layers.back().shard = 1;
  w.ipu.numIpus = numIpus;
  return w;
}

void expectSameTiming(const scheduler::Workload& w, std::uint32_t replicas) {
  const scheduler::CompiledWorkload full = compiled(w, false);
  const scheduler::CompiledWorkload mirrored = compiled(w, true);
  ASSERT_FALSE(full.exe.mirror.active());
  ASSERT_TRUE(mirrored.exe.mirror.active());
  EXPECT_EQ(mirrored.exe.mirror.replicas, replicas);
  // The same program tree: one executable stands for the other phase by phase.
  ASSERT_EQ(mirrored.exe.programs.size(), full.exe.programs.size());
  ASSERT_EQ(mirrored.exe.computeSets.size(), full.exe.computeSets.size());
  for (std::size_t i = 0; i < full.exe.programs.size(); ++i) {
    EXPECT_EQ(mirrored.exe.programs[i].kind, full.exe.programs[i].kind) << i;
    EXPECT_EQ(mirrored.exe.programs[i].name, full.exe.programs[i].name) << i;
  }
  // The point of it: a mirrored compute set holds one replica's vertices.
  for (std::size_t c = 0; c < full.exe.computeSets.size(); ++c)
    EXPECT_EQ(full.exe.computeSets[c].vertices.size(),
              (mirrored.exe.mirror.computeSet(ir::Id(c)) ? replicas : 1) * mirrored.exe.computeSets[c].vertices.size())
        << full.exe.computeSets[c].name;

  const model::hardware::LoadedExecutable a(full.exe, full.target, false);
  const model::hardware::LoadedExecutable b(mirrored.exe, mirrored.target, false);
  std::size_t mirroredSets = 0, mirroredCopies = 0;
  for (std::size_t c = 0; c < a.computeSets.size(); ++c) {
    const auto& x = a.computeSets[c];
    const auto& y = b.computeSets[c];
    mirroredSets += mirrored.exe.mirror.computeSet(ir::Id(c));
    EXPECT_EQ(y.ipuCycles(), x.ipuCycles()) << "compute set " << c << " '" << x.name() << "'";
    EXPECT_EQ(y.ipus(), x.ipus()) << x.name();
    ASSERT_EQ(y.tiles().size(), x.tiles().size()) << x.name();
    for (std::size_t t = 0; t < x.tiles().size(); ++t) {
      EXPECT_EQ(y.tiles()[t].tile, x.tiles()[t].tile) << x.name();
      EXPECT_EQ(y.tiles()[t].cycles, x.tiles()[t].cycles) << x.name() << " tile " << x.tiles()[t].tile;
      EXPECT_EQ(y.tiles()[t].vertices, x.tiles()[t].vertices) << x.name() << " tile " << x.tiles()[t].tile;
    }
  }
  ASSERT_EQ(b.copies.size(), a.copies.size());
  for (std::size_t i = 0; i < full.exe.programs.size(); ++i) {
    if (full.exe.programs[i].kind != ir::ProgramKind::Copy) continue;
    const auto& x = a.copies[a.copyIndexOfProgram[i]];
    const auto& y = b.copies[b.copyIndexOfProgram[i]];
    const std::string name = full.exe.programs[i].name;
    mirroredCopies += mirrored.exe.mirror.copy(ir::Id(i));
    EXPECT_EQ(y.cycles, x.cycles) << name;
    EXPECT_EQ(y.onChipCycles, x.onChipCycles) << name;
    EXPECT_EQ(y.linkCycles, x.linkCycles) << name;
    EXPECT_EQ(y.totalBytes, x.totalBytes) << name;
    EXPECT_EQ(y.ipus, x.ipus) << name;
    EXPECT_EQ(y.ipuUsesLink, x.ipuUsesLink) << name;
    EXPECT_EQ(y.ipuReceivedBytes, x.ipuReceivedBytes) << name;
    ASSERT_EQ(y.tiles.size(), x.tiles.size()) << name;
    for (std::size_t t = 0; t < x.tiles.size(); ++t) {
      EXPECT_EQ(y.tiles[t].tile, x.tiles[t].tile) << name;
      EXPECT_EQ(y.tiles[t].sentBytes, x.tiles[t].sentBytes) << name << " tile " << x.tiles[t].tile;
      EXPECT_EQ(y.tiles[t].receivedBytes, x.tiles[t].receivedBytes) << name << " tile " << x.tiles[t].tile;
      EXPECT_EQ(y.tiles[t].localBytes, x.tiles[t].localBytes) << name << " tile " << x.tiles[t].tile;
      EXPECT_EQ(y.tiles[t].cycles, x.tiles[t].cycles) << name << " tile " << x.tiles[t].tile;
    }
  }
  // Both kinds of phase were mirrored, and the all-reduce was not.
  EXPECT_GT(mirroredSets, 0u);
  EXPECT_GT(mirroredCopies, 0u);
  EXPECT_LT(mirroredSets, a.computeSets.size());
  EXPECT_LT(mirroredCopies, a.copies.size());
}

TEST(ReplicaMirror, TwoReplicasOfTheTutorialTimeAsTheFullLayout) { expectSameTiming(tutorial(2), 2); }
TEST(ReplicaMirror, FourReplicasOfTheTutorialTimeAsTheFullLayout) { expectSameTiming(tutorial(4), 4); }
TEST(ReplicaMirror, TwoReplicasOfTwoShardsTimeAsTheFullLayout) { expectSameTiming(shardedSmall(4), 2); }

TEST(ReplicaMirror, OneReplicaMirrorsNothing) {
  EXPECT_FALSE(compiled(tutorial(1), true).exe.mirror.active());
}

TEST(ReplicaMirror, AnOddReplicaWidthIsLaidOutInFull) {
  // Tile pairs (2k, 2k + 1) would not line up between replicas of 15 tiles.
  auto w = shardedSmall(2);
  w.layers.back().shard = 0;
  const model::Target odd = [&] {
    model::Target t = scheduler::targetFor(w);
    t.set("tile.tilesPerIpu", "15");
    return t;
  }();
  w.mirrorReplicas = true;
  EXPECT_FALSE(scheduler::compile(w, odd).exe.mirror.active());
}

TEST(ReplicaMirror, AMirroredExecutableRefusesFunctionalModeAndSerialization) {
  const scheduler::CompiledWorkload c = compiled(tutorial(2), true);
  try {
    model::hardware::LoadedExecutable loaded(c.exe, c.target, true);
    FAIL() << "loaded a mirrored executable in functional mode";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("timing-only"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ir::toJson(c.exe), std::logic_error);
}

}  // namespace
}  // namespace ipusim::testing::replica_mirror_test
