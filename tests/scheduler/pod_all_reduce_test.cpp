// The all-reduce over IPU-PODs joined by GW-Links
// (scheduler/multi_ipu/hierarchical_all_reduce.hpp) run on the machine model:
// exact sums in functional mode, and each stage's exchange timed as the
// stage's arithmetic says (bytes, links, bandwidth, latency), computed here
// from the parameters, not by the simulator's functions.
#include "scheduler/multi_ipu/hierarchical_all_reduce.hpp"

#include "collective_rig.hpp"

namespace ipusim::model::testing::pod_all_reduce_test {
namespace {

// smallTarget's IPUs (8 tiles, ports 4 B/cycle, exchange latency 20, a rail
// 16 B/cycle, a rung 48, 300 cycles per IPU-Link hop), in PODs of 4 IPUs,
// one IPU-Machine each: its gateway joined to the other POD's by 2 GW-Links
// of 2 B/cycle, 1000 cycles per GW-Link hop, 8 B/cycle from an IPU to it.
constexpr std::uint64_t kPortBytesPerCycle = 4, kExchangeLatency = 20;
constexpr std::uint64_t kGwLinks = 2, kGwBytesPerCycle = 2, kGwLatency = 1000, kIpuToGateway = 8, kIpusPerGateway = 4;

Target podsOf4(std::uint32_t pods) {
  Target t = smallTarget(4 * pods);
  t.set("gwLink.ipusPerPod", "4");
  t.set("gwLink.ipusPerGateway", "4");
  t.set("gwLink.linksPerGateway", std::to_string(kGwLinks));
  t.set("gwLink.linkBytesPerSecond", std::to_string(kGwBytesPerCycle) + "e9");
  t.set("gwLink.ipuBytesPerSecond", std::to_string(kIpuToGateway) + "e9");
  t.set("gwLink.latencyCycles", std::to_string(kGwLatency));
  t.validate();
  return t;
}

// R replicas, one per IPU (collective_rig.hpp): the all-reduce over the target's PODs.
Replicated build(const Target& target, std::uint64_t elements, double meanScale = 0) {
  const std::uint32_t replicas = target.numIpus(), pods = target.numPods(), perPod = replicas / pods;
  return buildCollective(target, replicas, elements, [&](const ir::Tensor& data, const ir::Tensor& received) {
    return scheduler::podAllReduce(data, received, replicas, pods, 6, scheduler::contiguousChunks(elements, perPod),
                                   meanScale);
  });
}

TEST(PodAllReduce, StagesInThePodsThenAcrossThemThenInThePods) {
  const Replicated g = build(podsOf4(2), 1000);
  EXPECT_EQ(g.stepNames, (std::vector<std::string>{"pod_reduce_scatter/0", "pod_reduce_scatter/1",
                                                   "pod_reduce_scatter/2", "gw_reduce_scatter/0", "gw_all_gather/0",
                                                   "pod_all_gather/0", "pod_all_gather/1", "pod_all_gather/2"}));
}

// 2 PODs of 4 replicas, 1000 floats (chunks of 250 cut in sub-chunks of 125,
// across tile boundaries): every replica ends with the exact sum (integers:
// any order is exact): 100 x (0 + ... + 7) + 8 x (i % 7).
TEST(PodAllReduce, EveryReplicaOfEveryPodEndsWithTheExactSum) {
  const Target t = podsOf4(2);
  const std::vector<float> values = valuesAfter(t, build(t, 1000));
  ASSERT_EQ(values.size(), 8000u);
  for (std::uint32_t r = 0; r < 8; ++r)
    for (std::uint64_t i = 0; i < 1000; ++i)
      ASSERT_EQ(values[r * 1000 + i], 2800.0f + 8 * float(i % 7)) << r << " " << i;
}

// MEAN (a fused optimizer's): the owners scale their sub-chunk by 1 / 8 between the
// GW-Link halves: every replica ends with the mean, (2800 + 8 (i % 7)) / 8, exact in float.
TEST(PodAllReduce, TheMeanIsTakenOnceBetweenTheGwLinkHalves) {
  const Target t = podsOf4(2);
  const std::vector<float> values = valuesAfter(t, build(t, 1000, 1.0 / 8));
  for (std::uint32_t r = 0; r < 8; ++r)
    for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(values[r * 1000 + i], 350.0f + float(i % 7)) << r << " " << i;
}

// Timing, 2 PODs of 4 replicas of 8192 floats (32 KiB a replica, 4 KiB a tile).
//   In a POD (ring 0 -> 2 -> 3 -> 1 -> 0, single IPU-Link hops): each step
//   moves a chunk of 32 KiB / 4 = 8 KiB, 2 tiles' worth: each sending tile's
//   port 4 KiB / 4 + 20 = 1044; a rail 300 + 8 KiB / 16 = 812: 1044 a step.
//   Across the PODs: every replica sends half its chunk (4 KiB, one tile's)
//   to its counterpart; the 4 IPUs behind a gateway share its 2 GW-Links:
//   1000 + 4 x 4 KiB / (2 x 2) = 5096 (the IPU's hop to the gateway 4 KiB / 8
//   = 512, the port 1044 bind less).
// Every IPU: 3 + 1 exchanges of the reduce-scatter, 1 + 3 of the all-gather.
TEST(PodAllReduce, EachStageIsTimedByItsLinksArithmetic) {
  const std::uint64_t copyBytes = 8192 * 4, perPod = 4, tiles = 8;
  const std::uint64_t chunk = copyBytes / perPod, subChunk = chunk / 2;
  const std::uint64_t tileBytes = copyBytes / tiles;
  const std::uint64_t podStep =
      std::max<std::uint64_t>(tileBytes / kPortBytesPerCycle + kExchangeLatency, 300 + chunk / 16);
  const std::uint64_t gwStep = std::max({kGwLatency + kIpusPerGateway * subChunk / (kGwLinks * kGwBytesPerCycle),
                                         subChunk / kIpuToGateway, subChunk / kPortBytesPerCycle + kExchangeLatency});
  ASSERT_EQ(podStep, 1044u);
  ASSERT_EQ(gwStep, 5096u);
  const std::vector<std::uint64_t> expected = {podStep, podStep, podStep, gwStep, gwStep, podStep, podStep, podStep};

  const Target t = podsOf4(2);
  const Replicated g = build(t, 8192);
  Recorder rec;
  Rig rig(t);
  rig.system.load(g.exe, LoadOptions{false});
  rig.system.addObserver(&rec);
  rig.device = [&](Rig& r) { r.system.run(0); };
  rig.simulate();
  for (std::uint32_t ipu = 0; ipu < 8; ++ipu) {
    const auto links = rec.of(PhaseKind::IpuLinkCopy, ipu);
    ASSERT_EQ(links.size(), expected.size()) << ipu;
    for (std::size_t s = 0; s < links.size(); ++s) EXPECT_EQ(links[s].duration, expected[s]) << ipu << " step " << s;
    EXPECT_EQ(rec.of(PhaseKind::Compute, ipu).size(), 4u) << ipu;  // the adds of both reduce-scatters
  }
}

TEST(PodAllReduce, ReplicasThatDoNotFillThePodsAlikeAreAnError) {
  const Target t = podsOf4(2);
  ir::GraphBuilder b(t, "collective");
  const ir::Id data = b.addTensor("grad", {6 * 8}, ir::DType::Float);
  const ir::Id received = b.addTensor("received", {6 * 8}, ir::DType::Float);
  try {
    scheduler::podAllReduce(b.tensor(data), b.tensor(received), 6, 4, 6, scheduler::contiguousChunks(8, 1));
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("6 replicas are not a multiple of 4 PODs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::model::testing::pod_all_reduce_test
