// What observers see: per-IPU phases that tile the run exactly, static
// phases announced once, and only as much detail as asked for.
#include "test_system_rig.hpp"

#include <algorithm>

namespace ipusim::model::testing::test_system_observer {
namespace {

// Per IPU: phases sorted by start never overlap and stay inside the run;
// returns the idle cycles (gaps) so that busy + idle = run length.
Cycles idleCycles(const Recorder& rec, std::uint32_t ipu, const RunEvent& run) {
  std::vector<PhaseEvent> mine;
  for (const auto& p : rec.phases)
    if (p.ipu == ipu && p.start >= run.start && p.start < run.end) mine.push_back(p);
  std::sort(mine.begin(), mine.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  Cycles at = run.start, idle = 0, busy = 0;
  for (const auto& p : mine) {
    EXPECT_GE(p.start, at) << "overlapping phases on IPU " << ipu;
    idle += p.start - at;
    busy += p.duration;
    at = p.start + p.duration;
  }
  EXPECT_LE(at, run.end);
  idle += run.end - at;
  EXPECT_EQ(busy + idle, run.end - run.start);
  return idle;
}

TEST(SystemObserver, PerIpuPhasesTileTheRunExactly) {
  const Target target = smallTarget(2);
  ExeBuilder b;
  const ir::Id in = b.stream("in", ir::StreamDirection::HostToDevice, 256);
  const ir::Id x = b.tensor("x", 256, 0), x1 = b.tensor("x1", 256, 9);
  const ir::Id y = b.tensor("y", 256, 9), z = b.tensor("z", 256, 9);
  const ir::Id cs1 = b.computeSet("on_ipu1");
  b.add(cs1, 9, x1, y, z);
  const ir::Id cs0 = b.computeSet("on_ipu0");
  const ir::Id p = b.tensor("p", 64, 0), q = b.tensor("q", 64, 0);
  b.add(cs0, 0, p, p, q);
  b.entry("main", b.sequence({b.streamCopy(in, b.all(x)), b.copy(b.all(x), b.all(x1)), b.execute(cs1),
                              b.execute(cs0), b.sync(ir::SyncType::External)}));
  Rig rig(target);
  Recorder rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  rig.device = [&](Rig& r) {
    sc_core::wait(cyclesToTime(5000));  // the run does not start at 0
    r.system.run(0);
  };
  rig.host = [&](Rig& r) {
    sc_core::wait(cyclesToTime(6000));
    r.system.stream(in).push(Bytes(1024));
  };
  rig.simulate();
  ASSERT_EQ(rec.runs.size(), 1u);
  const RunEvent& run = rec.runs[0];
  EXPECT_EQ(run.start, 5000u);
  // IPU 0 idles while IPU 1 computes cs1 (compute + internal sync); IPU 1
  // idles during cs0. Everything else (stream copy, link copy, sync) is shared.
  const Cycles addCs1 = rec.of(PhaseKind::Compute, 1).at(0).duration + 100;
  const Cycles addCs0 = rec.of(PhaseKind::Compute, 0).at(0).duration + 100;
  EXPECT_EQ(idleCycles(rec, 0, run), addCs1);
  EXPECT_EQ(idleCycles(rec, 1, run), addCs0);
  // The stream copy waited 1000 cycles for the host, inside its Begin.
  EXPECT_EQ(rec.copies.at(0).duration, 1000u);
  // Programs: every node begins and ends, the root spanning the run.
  EXPECT_EQ(rec.programBegins.size(), 6u);
  EXPECT_EQ(rec.programEnds.size(), 6u);
  EXPECT_EQ(rec.programBegins.front().second, run.start);
  EXPECT_EQ(rec.programEnds.back().second, run.end);
}

TEST(SystemObserver, StaticPhasesAreAnnouncedOnceBeforeTheirFirstPhaseEvent) {
  ExeBuilder b;
  const ir::Id a = b.tensor("a", 64, 0), c = b.tensor("c", 64, 0);
  const ir::Id cs = b.computeSet("double");
  b.add(cs, 0, a, a, c);
  const ir::Id body = b.sequence({b.execute(cs), b.copy(b.all(c), b.all(a))}, true);
  b.entry("train", b.repeat(4, body));
  Rig rig(smallTarget());
  Recorder rec;  // Phases detail: no tile data
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  rig.device = [&](Rig& r) {
    r.system.run(0);
    r.system.run(0);
  };
  rig.simulate();
  ASSERT_EQ(rec.statics.size(), 2u);
  EXPECT_EQ(rec.statics[0].kind, PhaseKind::Compute);
  EXPECT_EQ(rec.statics[1].kind, PhaseKind::Exchange);
  EXPECT_TRUE(rec.statics[0].tileCycles.empty());
  EXPECT_EQ(rec.order.substr(0, 4), "SPPS");  // compute + sync, then the copy's announcement
  EXPECT_EQ(rec.runs.size(), 2u);
  EXPECT_EQ(rec.runs[1].steps, 4u);
  EXPECT_EQ(rec.steps.back(), 7u);  // step numbers continue across runs
}

// detailFor() is asked per run: RunsOnly runs pay nothing per phase.
struct EveryOtherRun : Recorder {
  Detail detailFor(const RunEvent& run) override { return run.runIndex % 2 ? Detail::Phases : Detail::RunsOnly; }
};

TEST(SystemObserver, DetailIsChosenPerRun) {
  ExeBuilder b;
  const ir::Id a = b.tensor("a", 8, 0), c = b.tensor("c", 8, 0);
  const ir::Id cs = b.computeSet("cs");
  b.add(cs, 0, a, a, c);
  b.entry("main", b.execute(cs));
  Rig rig(smallTarget());
  EveryOtherRun rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  rig.device = [&](Rig& r) {
    for (int i = 0; i < 4; ++i) r.system.run(0);
  };
  rig.simulate();
  EXPECT_EQ(rec.runs.size(), 4u);
  EXPECT_EQ(rec.of(PhaseKind::Compute, 0).size(), 2u);  // runs 1 and 3 only
  EXPECT_EQ(rec.statics.size(), 1u);
}

}  // namespace
}  // namespace ipusim::model::testing::test_system_observer
