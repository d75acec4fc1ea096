// Timing of compute sets and syncs: exact cycle counts.
#include "model/codelets/codelet.hpp"
#include "model/hardware/tile.hpp"
#include "test_system_rig.hpp"

namespace ipusim::model::testing::test_timing_compute {
namespace {

// cycles() of an Add vertex over n floats, as the codelet defines it.
Cycles addCycles(std::uint64_t n, const Target& target) {
  const Codelet& add = CodeletRegistry::instance().get("Add");
  return add.cycles(VertexShape{{n, n, n}, {}}, target);
}

TEST(TimingCompute, WorkerVerticesAreDealtToTheLeastLoadedContext) {
  TileParams params;
  params.workerContexts = 6;
  params.supervisorOverheadCycles = 50;
  // Six contexts take 10..60; the seventh vertex (70) joins the 10: busiest 80.
  EXPECT_EQ(hardware::tileComputeCycles({10, 20, 30, 40, 50, 60, 70}, {}, params), 6 * 80 + 50u);
  // Supervisor vertices run one after another, after the workers.
  EXPECT_EQ(hardware::tileComputeCycles({10}, {100, 200}, params), 6 * 10 + 300 + 50u);
  // A tile with no vertex costs nothing, not even the overhead.
  EXPECT_EQ(hardware::tileComputeCycles({}, {}, params), 0u);
}

TEST(TimingCompute, ComputeSetIsMaxOverTilesOfSixTimesBusiestContextPlusOverheadThenSync) {
  const Target target = smallTarget();
  ExeBuilder b;
  const ir::Id cs = b.computeSet("add");
  // Tile 0: seven vertices of 64..448 floats (7 > 6 contexts); tile 1: one big vertex.
  std::vector<Cycles> tile0;
  for (std::uint64_t i = 1; i <= 7; ++i) {
    const std::uint64_t n = 64 * i;
    const ir::Id x = b.tensor("x" + std::to_string(i), n, 0), y = b.tensor("y" + std::to_string(i), n, 0),
                 z = b.tensor("z" + std::to_string(i), n, 0);
    b.add(cs, 0, x, y, z);
    tile0.push_back(addCycles(n, target));
  }
  const ir::Id x = b.tensor("bx", 1000, 1), y = b.tensor("by", 1000, 1), z = b.tensor("bz", 1000, 1);
  b.add(cs, 1, x, y, z);
  b.entry("main", b.execute(cs));

  // The rule, computed here from the codelet's cycles(): greedy dealing.
  std::vector<Cycles> contexts(6, 0);
  for (Cycles c : tile0) *std::min_element(contexts.begin(), contexts.end()) += c;
  const Cycles tile0Cycles = 6 * *std::max_element(contexts.begin(), contexts.end()) + 50;
  const Cycles tile1Cycles = 6 * addCycles(1000, target) + 50;
  const Cycles compute = std::max(tile0Cycles, tile1Cycles);

  Rig rig(target);
  Recorder rec;
  rec.detail = Detail::Tiles;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();

  EXPECT_EQ(duration, compute + 100);  // + internal sync
  ASSERT_EQ(rec.of(PhaseKind::Compute, 0).size(), 1u);
  EXPECT_EQ(rec.of(PhaseKind::Compute, 0)[0].duration, compute);
  ASSERT_EQ(rec.of(PhaseKind::Sync, 0).size(), 1u);
  EXPECT_EQ(rec.of(PhaseKind::Sync, 0)[0].duration, 100u);
  EXPECT_EQ(rec.of(PhaseKind::Sync, 0)[0].start, compute);
  // Tile detail: per-tile cycles and vertex counts, announced before the phase.
  ASSERT_EQ(rec.statics.size(), 1u);
  EXPECT_EQ(rec.order.front(), 'S');
  ASSERT_EQ(rec.statics[0].tileCycles.size(), 8u);
  EXPECT_EQ(rec.statics[0].tileCycles[0], tile0Cycles);
  EXPECT_EQ(rec.statics[0].tileCycles[1], tile1Cycles);
  EXPECT_EQ(rec.statics[0].tileCycles[2], 0u);
  EXPECT_EQ(rec.statics[0].tileVertices[0], 7u);
  EXPECT_EQ(rec.statics[0].tileVertices[1], 1u);
}

// A compute set over two IPUs ends in an external sync; the faster IPU waits
// for the slower one inside its sync phase.
TEST(TimingSync, ComputeSetSpanningTwoIpusSyncsExternallyAndTheFasterIpuWaits) {
  const Target target = smallTarget(2);
  ExeBuilder b;
  const ir::Id cs = b.computeSet("both");
  const ir::Id a0 = b.tensor("a0", 4000, 3), b0 = b.tensor("b0", 4000, 3), c0 = b.tensor("c0", 4000, 3);
  const ir::Id a1 = b.tensor("a1", 40, 9), b1 = b.tensor("b1", 40, 9), c1 = b.tensor("c1", 40, 9);
  b.add(cs, 3, a0, b0, c0);  // IPU 0, slow
  b.add(cs, 9, a1, b1, c1);  // IPU 1 (tile 9 = IPU 1's tile 1), fast
  b.entry("main", b.execute(cs));
  const Cycles slow = 6 * addCycles(4000, target) + 50, fast = 6 * addCycles(40, target) + 50;
  ASSERT_GT(slow, fast);

  Rig rig(target);
  Recorder rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();

  EXPECT_EQ(duration, slow + 500);
  EXPECT_EQ(rec.of(PhaseKind::Compute, 0).at(0).duration, slow);
  EXPECT_EQ(rec.of(PhaseKind::Compute, 1).at(0).duration, fast);
  EXPECT_EQ(rec.of(PhaseKind::Sync, 0).at(0).duration, 500u);
  EXPECT_EQ(rec.of(PhaseKind::Sync, 1).at(0).start, fast);
  EXPECT_EQ(rec.of(PhaseKind::Sync, 1).at(0).duration, slow - fast + 500);
}

TEST(TimingSync, ExplicitSyncsCostInternalOrExternalCyclesOnEveryIpu) {
  const Target target = smallTarget(2);
  ExeBuilder b;
  const ir::Id internal = b.sync(ir::SyncType::Internal);
  const ir::Id external = b.sync(ir::SyncType::External);
  b.entry("internal", internal);
  b.entry("external", external);
  Rig rig(target);
  Recorder rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  Cycles tInternal = 0, tExternal = 0;
  rig.device = [&](Rig& r) {
    tInternal = r.timedRun(0);
    tExternal = r.timedRun(1);
  };
  rig.simulate();
  EXPECT_EQ(tInternal, 100u);
  EXPECT_EQ(tExternal, 500u);
  EXPECT_EQ(rec.of(PhaseKind::Sync, 0).size(), 2u);
  EXPECT_EQ(rec.of(PhaseKind::Sync, 1).size(), 2u);
  EXPECT_EQ(rig.system.runsCompleted(), 2u);
}

// A compute set on one IPU of two: internal sync, and only that IPU has phases.
TEST(TimingSync, ComputeSetOnOneIpuSyncsInternally) {
  const Target target = smallTarget(2);
  ExeBuilder b;
  const ir::Id cs = b.computeSet("one");
  const ir::Id a = b.tensor("a", 100, 12), c = b.tensor("c", 100, 12), d = b.tensor("d", 100, 12);
  b.add(cs, 12, a, c, d);
  b.entry("main", b.execute(cs));
  Rig rig(target);
  Recorder rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();
  EXPECT_EQ(duration, 6 * addCycles(100, target) + 50 + 100);
  EXPECT_TRUE(rec.of(PhaseKind::Compute, 0).empty());
  EXPECT_EQ(rec.of(PhaseKind::Compute, 1).size(), 1u);
}

}  // namespace
}  // namespace ipusim::model::testing::test_timing_compute
