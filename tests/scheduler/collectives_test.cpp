// Cross-replica collectives (scheduler/multi_ipu/collectives.hpp) run on the machine
// model: exact sums in functional mode, and the fabric's timing of each step.
#include "scheduler/multi_ipu/collectives.hpp"

#include "collective_rig.hpp"
#include "model/hardware/ipu_link_topology.hpp"

namespace ipusim::model::testing::collectives_test {
namespace {

// R replicas on `target` (collective_rig.hpp): the ring all-reduce, or a broadcast from replica 1.
Replicated build(const Target& target, std::uint32_t replicas, std::uint64_t elements, bool allReduce) {
  return buildCollective(target, replicas, elements, [&](const ir::Tensor& data, const ir::Tensor& received) {
    return allReduce ? scheduler::ringAllReduce(data, received, scheduler::ladderRing(replicas), 6)
                     : scheduler::broadcast(data, replicas, 1);
  });
}

// Runs the collective once (one simulation per process), timing only: the phases recorded.
void recordPhases(const Target& target, const Replicated& g, Recorder& rec) {
  Rig rig(target);
  rig.system.load(g.exe, LoadOptions{false});
  rig.system.addObserver(&rec);
  rig.device = [&](Rig& r) { r.system.run(0); };
  rig.simulate();
}

TEST(Collectives, LadderRingStepsAreSingleHops) {
  EXPECT_EQ(scheduler::ladderRing(1), (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(scheduler::ladderRing(2), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(scheduler::ladderRing(8), (std::vector<std::uint32_t>{0, 2, 4, 6, 7, 5, 3, 1}));
  const Target t = smallTarget(16);
  const hardware::IpuLinkTopology topology(t.ipuLink);
  const auto ring = scheduler::ladderRing(16);
  for (std::size_t p = 0; p < ring.size(); ++p)
    EXPECT_EQ(topology.route(ring[p], ring[(p + 1) % ring.size()]).size(), 1u) << p;
}

// 4 replicas, 1000 floats (chunks of 250 cross tile boundaries): every
// replica ends with the exact sum (integers, so any order is exact).
TEST(Collectives, RingAllReduceLeavesEveryReplicaTheExactSum) {
  const std::vector<float> values = valuesAfter(smallTarget(4), build(smallTarget(4), 4, 1000, true));
  ASSERT_EQ(values.size(), 4000u);
  for (std::uint32_t r = 0; r < 4; ++r)
    for (std::uint64_t i = 0; i < 1000; ++i)
      ASSERT_EQ(values[r * 1000 + i], 600.0f + 4 * float(i % 7)) << r << " " << i;
}

TEST(Collectives, BroadcastCopiesTheRootToEveryReplica) {
  const std::vector<float> values = valuesAfter(smallTarget(4), build(smallTarget(4), 4, 100, false));
  for (std::uint32_t r = 0; r < 4; ++r)
    for (std::uint64_t i = 0; i < 100; ++i) ASSERT_EQ(values[r * 100 + i], 100.0f + float(i % 7)) << r << " " << i;
}

// Timing: 4 replicas of 8192 floats (4 KiB per tile). Ring 0 -> 2 -> 3 -> 1 -> 0.
// Each step sends a chunk of 8 KiB (2 tiles' worth) one hop: each sending
// tile's port moves 4 KiB (1024 cycles + 20 latency), the rails carry 8 KiB at
// 16 B/cycle (300 + 512). So every one of the 2 (R - 1) = 6 exchanges lasts
// 1044 cycles and each IPU sends 2 (R - 1) / R of its 32 KiB.
TEST(Collectives, RingAllReduceStepsAreTimedByTheFabric) {
  Recorder rec;
  recordPhases(smallTarget(4), build(smallTarget(4), 4, 8192, true), rec);
  for (std::uint32_t ipu = 0; ipu < 4; ++ipu) {
    const auto links = rec.of(PhaseKind::IpuLinkCopy, ipu);
    ASSERT_EQ(links.size(), 6u) << ipu;
    std::uint64_t received = 0;
    for (const auto& p : links) {
      EXPECT_EQ(p.duration, 1044u);
      received += p.bytes;
    }
    EXPECT_EQ(received, 2 * 3 * 32768u / 4) << ipu;
    EXPECT_EQ(rec.of(PhaseKind::Compute, ipu).size(), 3u);  // the reduce-scatter's adds
  }
}

// With wide tile ports (a what-if) the rail hops bind: 300 + 8192 / 16.
TEST(Collectives, RingAllReduceWithWidePortsIsBoundByTheRails) {
  Target t = smallTarget(4);
  t.set("exchange.bytesPerCycle", "1024");
  Recorder rec;
  recordPhases(t, build(t, 4, 8192, true), rec);
  for (const auto& p : rec.of(PhaseKind::IpuLinkCopy, 0)) EXPECT_EQ(p.duration, 300 + 8192 / 16u);
}

}  // namespace
}  // namespace ipusim::model::testing::collectives_test
