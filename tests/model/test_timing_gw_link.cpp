// GW-Links between IPU-PODs (model/hardware/ipu_link*.hpp, gwLink.*): the
// topology of gateways, routes across PODs, exact timing probes, the POD
// parameters' checks and the named systems. podTarget(): smallTarget's IPUs
// (8 tiles, 1 GHz, ports 4 bytes per cycle) in PODs of 8 IPUs, an
// IPU-Machine of 4 IPUs behind each gateway; a GW-Link carries 2 bytes per
// cycle each way (2 links per gateway), an IPU reaches its gateway at 8 bytes
// per cycle; 1000 cycles per GW-Link hop.
#include "model/hardware/ipu_link_topology.hpp"
#include "model/system_preset.hpp"
#include "test_system_rig.hpp"

namespace ipusim::model::testing::test_timing_gw_link {
namespace {

Target podTarget(std::uint32_t numIpus) {
  Target t = smallTarget(numIpus);
  t.set("gwLink.ipusPerPod", "8");
  t.set("gwLink.ipusPerGateway", "4");
  t.set("gwLink.linksPerGateway", "2");
  t.set("gwLink.linkBytesPerSecond", "2e9");
  t.set("gwLink.ipuBytesPerSecond", "8e9");
  t.set("gwLink.latencyCycles", "1000");
  t.validate();
  return t;
}

Cycles runOnce(const Target& target, const ExeBuilder& b) {
  Rig rig(target);
  rig.system.load(b.exe, LoadOptions{false});
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();
  return duration;
}

// One Copy: `floats` floats from tile 0 of each IPU in `from` to tile 0 of IPU + `shift`.
ExeBuilder copiesBetween(const std::vector<std::uint32_t>& from, std::uint32_t shift, std::uint64_t floats) {
  ExeBuilder b;
  ir::Program p;
  p.kind = ir::ProgramKind::Copy;
  for (std::uint32_t ipu : from) {
    const ir::Id src = b.tensor("src" + std::to_string(ipu), floats, ipu * 8);
    const ir::Id dst = b.tensor("dst" + std::to_string(ipu), floats, (ipu + shift) * 8);
    p.regions.push_back({b.all(src), b.all(dst)});
  }
  b.entry("main", b.program(p));
  return b;
}

std::string errorOf(Target t) {
  try {
    t.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

using Hops = std::vector<hardware::IpuLinkTopology::Hop>;

// Two PODs of 8: each POD its own ladder (no rail from IPU 6 to IPU 8); IPUs
// 0-3 behind gateway 16, 4-7 behind 17, 8-11 behind 18, 12-15 behind 19; the
// gateways of machine k of the two PODs joined by both their links. (Routes
// count every hop alike, IPU-Link or GW-Link.)
TEST(GwLinkTopology, TwoPodsAreLaddersJoinedGatewayToGateway) {
  const Target t = podTarget(16);
  EXPECT_EQ(t.numPods(), 2u);
  const hardware::IpuLinkTopology topology(t.ipuLink, t.gwLink);
  EXPECT_EQ(topology.numNodes(), 20u);
  EXPECT_EQ(topology.links(6, 8), 0u);
  EXPECT_EQ(topology.links(0, 2), 1u);
  EXPECT_EQ(topology.links(3, 16), 1u);
  EXPECT_EQ(topology.links(4, 17), 1u);
  EXPECT_EQ(topology.links(16, 18), 2u);
  EXPECT_EQ(topology.links(17, 19), 2u);
  EXPECT_EQ(topology.links(16, 19), 0u);
  EXPECT_EQ(topology.route(0, 8), (Hops{{0, 16}, {16, 18}, {18, 8}}));
  EXPECT_EQ(topology.route(0, 3), (Hops{{0, 1}, {1, 3}}));  // within a POD, never through the gateway
  // IPU 5 to 9 (POD 1, machine 2): fewest hops, over machine 0's gateway.
  EXPECT_EQ(topology.route(5, 9), (Hops{{5, 3}, {3, 16}, {16, 18}, {18, 9}}));
}

// Four PODs: a loop of gateways, one link to each side; POD 0 to POD 2 goes
// through POD 1's gateway (the lower of the two ways round).
TEST(GwLinkTopology, FourPodsFormALoopOfGateways) {
  const Target t = podTarget(32);
  const hardware::IpuLinkTopology topology(t.ipuLink, t.gwLink);
  EXPECT_EQ(topology.numNodes(), 40u);
  EXPECT_EQ(topology.links(32, 34), 1u);  // POD 0 machine 0 to POD 1 machine 0
  EXPECT_EQ(topology.links(32, 38), 1u);  // ... and to POD 3's: the loop closes
  EXPECT_EQ(topology.links(32, 36), 0u);
  EXPECT_EQ(topology.route(0, 16), (Hops{{0, 32}, {32, 34}, {34, 36}, {36, 16}}));
}

// The 4 IPUs of POD 0's first machine each send 4 KiB to their counterpart
// in POD 1 at once. Their gateway's GW-Links carry 4 x 4096 bytes at 2 links
// x 2 bytes per cycle: 1000 + 4096 cycles; each IPU's hop to the gateway
// 4096 / 8 = 512 and each tile's port 4096 / 4 + 20 = 1044 bind less.
TEST(TimingGwLink, AGatewaysIpusShareItsGwLinks) {
  const std::uint64_t bytes = 4096;
  const Cycles gwHop = 1000 + 4 * bytes / (2 * 2), ipuHop = bytes / 8, port = bytes / 4 + 20;
  EXPECT_EQ(runOnce(podTarget(16), copiesBetween({0, 1, 2, 3}, 8, bytes / 4)), std::max({gwHop, ipuHop, port}));
  EXPECT_EQ(gwHop, 5096u);
}

// One IPU alone, its link to the gateway made slow (2 bytes per cycle): that
// hop binds, 1000 + 4096 / 2, and the GW-Links (4 bytes per cycle) do not.
TEST(TimingGwLink, OneIpusPathToItsGatewayBindsASingleFlow) {
  Target t = podTarget(16);
  t.set("gwLink.ipuBytesPerSecond", "2e9");
  EXPECT_EQ(runOnce(t, copiesBetween({0}, 8, 1024)), 1000 + 4096 / 2u);
}

// Across two GW-Link hops (POD 0 to POD 2 of 4): both hops' latencies, one
// link each way: 2 x 1000 + 4096 / 2.
TEST(TimingGwLink, ARouteOverTwoGwHopsPaysBothLatencies) {
  EXPECT_EQ(runOnce(podTarget(32), copiesBetween({0}, 16, 1024)), 2 * 1000 + 4096 / 2u);
}

TEST(GwLinkParams, PodsThatDoNotDivideTheSystemAreAnErrorNamingTheKey) {
  Target t = podTarget(16);
  t.set("ipuLink.numIpus", "12");
  const std::string error = errorOf(t);
  EXPECT_NE(error.find("'gwLink.ipusPerPod' = 8"), std::string::npos) << error;
  EXPECT_NE(error.find("ipuLink.numIpus = 12"), std::string::npos) << error;
  t.set("gwLink.ipusPerPod", "6");
  const std::string machines = errorOf(t);
  EXPECT_NE(machines.find("gwLink.ipusPerGateway = 4"), std::string::npos) << machines;
  Target loop = podTarget(32);
  loop.set("gwLink.linksPerGateway", "1");
  const std::string links = errorOf(loop);
  EXPECT_NE(links.find("'gwLink.linksPerGateway' = 1"), std::string::npos) << links;
  EXPECT_NE(links.find("4 PODs"), std::string::npos) << links;
}

TEST(SystemPresets, Pod128AndPod256AreIpuPod64RacksJoinedByGwLinks) {
  Target t = Target::preset("ipu2");
  applySystem(t, "pod256");
  t.validate();
  EXPECT_EQ(t.numIpus(), 256u);
  EXPECT_EQ(t.ipuLink.railsWrap, 1u);
  EXPECT_EQ(t.numPods(), 4u);
  applySystem(t, "pod128");
  t.validate();
  EXPECT_EQ(t.numPods(), 2u);
  applySystem(t, "pod64");
  EXPECT_EQ(t.numPods(), 1u);
  EXPECT_EQ(t.ipuLink.railsWrap, 1u);
  Target mk1 = Target::preset("ipu1");
  EXPECT_THROW(applySystem(mk1, "pod16"), std::invalid_argument);
  try {
    applySystem(t, "pod512");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pod128, pod256"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipusim::model::testing::test_timing_gw_link
