// Timing of a Sequence running its IPUs apart (ir::Program::ipusApart, a
// pipeline slot): each IPU on its own clock between the phases that join
// IPUs, meeting at the end. Exact cycle counts.
#include "model/codelets/codelet.hpp"
#include "test_system_rig.hpp"

namespace ipusim::model::testing::test_timing_ipus_apart {
namespace {

// cycles() of an Add vertex over n floats, as the codelet defines it.
Cycles addCycles(std::uint64_t n, const Target& target) {
  const Codelet& add = CodeletRegistry::instance().get("Add");
  return add.cycles(VertexShape{{n, n, n}, {}}, target);
}

// A compute set of one Add vertex over n floats on `tile`: 6 x its cycles + 50 (smallTarget).
ir::Id addOn(ExeBuilder& b, const std::string& name, std::uint32_t tile, std::uint64_t n) {
  const ir::Id cs = b.computeSet(name);
  b.add(cs, tile, b.tensor(name + "/a", n, tile), b.tensor(name + "/b", n, tile), b.tensor(name + "/c", n, tile));
  return b.execute(cs);
}

ir::Id apart(ExeBuilder& b, std::vector<ir::Id> children) {
  const ir::Id id = b.sequence(std::move(children));
  b.exe.programs[id].ipusApart = true;
  return id;
}

struct Timed {
  Cycles duration = 0;
  Recorder rec;
};

Timed runMain(const Target& target, const ExeBuilder& b) {
  Timed t;
  Rig rig(target);
  rig.system.load(b.exe);
  rig.system.addObserver(&t.rec);
  rig.device = [&](Rig& r) { t.duration = r.timedRun(0); };
  rig.simulate();
  return t;
}

// IPU 0 runs two compute sets, IPU 1 one between them in program order: in
// lockstep IPU 0's second one would wait for IPU 1's; apart, it follows its
// first at once, and the IPUs meet at the end in an external sync.
TEST(TimingIpusApart, EachIpuRunsOnItsOwnClockAndTheyMeetInAnExternalSync) {
  const Target target = smallTarget(2);
  ExeBuilder b;
  const ir::Id first = addOn(b, "ipu0_first", 3, 2000), other = addOn(b, "ipu1", 9, 1000),
               second = addOn(b, "ipu0_second", 3, 3000);
  b.entry("main", apart(b, {first, other, second}));
  const Cycles c1 = 6 * addCycles(2000, target) + 50, c2 = 6 * addCycles(3000, target) + 50,
               c3 = 6 * addCycles(1000, target) + 50;
  const Cycles ipu0 = c1 + 100 + c2 + 100, ipu1 = c3 + 100;
  ASSERT_GT(ipu0, ipu1);

  const Timed t = runMain(target, b);
  EXPECT_EQ(t.duration, ipu0 + 500);
  ASSERT_EQ(t.rec.of(PhaseKind::Compute, 0).size(), 2u);
  EXPECT_EQ(t.rec.of(PhaseKind::Compute, 0)[1].start, c1 + 100);  // not after IPU 1's compute set
  EXPECT_EQ(t.rec.of(PhaseKind::Compute, 1).at(0).start, 0u);
  // IPU 1: its internal sync, then it waits for IPU 0 in the meeting's sync.
  const auto sync1 = t.rec.of(PhaseKind::Sync, 1);
  ASSERT_EQ(sync1.size(), 2u);
  EXPECT_EQ(sync1[0].duration, 100u);
  EXPECT_EQ(sync1[1].start, ipu1);
  EXPECT_EQ(sync1[1].duration, ipu0 - ipu1 + 500);
  EXPECT_EQ(t.rec.of(PhaseKind::Sync, 0).back().start, ipu0);
  EXPECT_EQ(t.rec.of(PhaseKind::Sync, 0).back().duration, 500u);
}

// A copy over the IPU-Links joins its IPUs: it starts when the later one is
// free, the earlier waiting in a Sync phase.
TEST(TimingIpusApart, ACopyOverTheLinksJoinsItsIpus) {
  const Target target = smallTarget(2);
  ExeBuilder b;
  const ir::Id slow = addOn(b, "ipu0", 3, 4000), fast = addOn(b, "ipu1", 9, 40);
  const ir::Id x = b.tensor("x", 256, 3), y = b.tensor("y", 256, 9);
  const ir::Id link = b.copy(b.all(x), b.all(y));
  b.entry("main", apart(b, {slow, fast, link}));
  const Cycles s = 6 * addCycles(4000, target) + 50 + 100, f = 6 * addCycles(40, target) + 50 + 100;

  const Timed t = runMain(target, b);
  const auto copy0 = t.rec.of(PhaseKind::IpuLinkCopy, 0), copy1 = t.rec.of(PhaseKind::IpuLinkCopy, 1);
  ASSERT_EQ(copy0.size(), 1u);
  ASSERT_EQ(copy1.size(), 1u);
  EXPECT_EQ(copy0[0].start, s);
  EXPECT_EQ(copy1[0].start, s);
  const auto sync1 = t.rec.of(PhaseKind::Sync, 1);
  ASSERT_GE(sync1.size(), 2u);
  EXPECT_EQ(sync1[1].start, f);  // after its internal sync, IPU 1 waits for IPU 0
  EXPECT_EQ(sync1[1].duration, s - f);
  // Both leave the copy together: the meeting costs the external sync alone.
  EXPECT_EQ(t.duration, s + copy0[0].duration + 500);
}

// An IPU that runs no program of its own in the Sequence (a pipeline stage
// with no pass in the slot) has no phase after its part of the copy that
// joined it: idle. The one IPU left meets nobody: no external sync.
TEST(TimingIpusApart, AnIpuWithNoProgramOfItsOwnIsIdleAfterTheCopyThatJoinedIt) {
  const Target target = smallTarget(2);
  ExeBuilder b;
  const ir::Id x = b.tensor("x", 256, 3), y = b.tensor("y", 256, 9);
  b.entry("main", apart(b, {b.copy(b.all(x), b.all(y)), addOn(b, "ipu1", 9, 1000)}));
  const Timed t = runMain(target, b);
  const auto copy0 = t.rec.of(PhaseKind::IpuLinkCopy, 0);
  ASSERT_EQ(copy0.size(), 1u);
  EXPECT_EQ(t.duration, copy0[0].duration + 6 * addCycles(1000, target) + 50 + 100);
  EXPECT_TRUE(t.rec.of(PhaseKind::Compute, 0).empty());
  EXPECT_TRUE(t.rec.of(PhaseKind::Sync, 0).empty());
  EXPECT_EQ(t.rec.of(PhaseKind::Sync, 1).size(), 1u);  // its own internal sync only
}

}  // namespace
}  // namespace ipusim::model::testing::test_timing_ipus_apart
