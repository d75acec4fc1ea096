// The IPU-Link fabric (model/hardware/ipu_link*.hpp): topology, routes and
// timing probes, exact cycles. smallTarget(): 8 tiles per IPU at 1 GHz, tile
// ports 4 bytes per cycle, exchange latency 20; a link carries 16 bytes per
// cycle each way, a rung (IPUs 2k, 2k+1) has 3 links, a rail (i, i+2) 1;
// 300 cycles per hop.
#include "model/hardware/ipu_link_topology.hpp"
#include "test_system_rig.hpp"

namespace ipusim::model::testing::test_timing_ipu_link {
namespace {

Cycles runOnce(const Target& target, const ExeBuilder& b, Recorder* rec = nullptr) {
  Rig rig(target);
  rig.system.load(b.exe, LoadOptions{false});
  if (rec) rig.system.addObserver(rec);
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();
  return duration;
}

// A float tensor of `perTile` elements on each of `tiles` (global tile indices).
ir::Id spread(ExeBuilder& b, const std::string& name, std::uint64_t perTile, const std::vector<std::uint32_t>& tiles) {
  std::vector<ir::TileInterval> mapping;
  for (std::size_t i = 0; i < tiles.size(); ++i)
    mapping.push_back({tiles[i], i * perTile, (i + 1) * perTile, ir::TileInterval::kUnplaced});
  return b.tensorMapped(name, perTile * tiles.size(), mapping);
}

std::vector<std::uint32_t> tileRange(std::uint32_t first, std::uint32_t count) {
  std::vector<std::uint32_t> tiles(count);
  for (std::uint32_t i = 0; i < count; ++i) tiles[i] = first + i;
  return tiles;
}

// Entry "main": one Copy of every region (one exchange phase).
void entryCopy(ExeBuilder& b, std::vector<ir::CopyRegion> regions) {
  ir::Program p;
  p.kind = ir::ProgramKind::Copy;
  p.regions = std::move(regions);
  b.entry("main", b.program(p));
}

TEST(IpuLinkTopology, Mk2LadderGivesEveryMiddleIpuItsTenLinks) {
  Target t = Target::preset("ipu2");
  t.set("ipuLink.numIpus", "16");
  const hardware::IpuLinkTopology topology(t.ipuLink);
  EXPECT_EQ(topology.links(0, 1), 6u);  // the pair of an IPU-M2000
  EXPECT_EQ(topology.links(0, 2), 2u);  // along a rail
  EXPECT_EQ(topology.links(0, 3), 0u);
  std::uint32_t ofIpu6 = 0, ofIpu0 = 0;
  for (std::uint32_t other = 0; other < 16; ++other) ofIpu6 += topology.links(6, other), ofIpu0 += topology.links(0, other);
  EXPECT_EQ(ofIpu6, 10u);  // GC200: 10 IPU-Links
  EXPECT_EQ(ofIpu0, 8u);   // the ladder's end has no rail below it
  t.set("ipuLink.railsWrap", "1");
  const hardware::IpuLinkTopology torus(t.ipuLink);
  EXPECT_EQ(torus.links(0, 14), 2u);
  EXPECT_EQ(torus.route(0, 14).size(), 1u);
}

TEST(IpuLinkTopology, RoutesAreShortestAndPreferTheLowestNextIpu) {
  Target t = smallTarget(6);
  const hardware::IpuLinkTopology topology(t.ipuLink);
  using Hops = std::vector<hardware::IpuLinkTopology::Hop>;
  EXPECT_EQ(topology.route(0, 4), (Hops{{0, 2}, {2, 4}}));
  EXPECT_EQ(topology.route(0, 3), (Hops{{0, 1}, {1, 3}}));
  EXPECT_EQ(topology.route(5, 0), (Hops{{5, 3}, {3, 1}, {1, 0}}));
  EXPECT_TRUE(topology.route(2, 2).empty());
}

TEST(IpuLinkTopology, IpusWithoutARouteAreAnErrorNamingTheLinks) {
  Target t = smallTarget(4);
  t.set("ipuLink.linksPerRail", "0");
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 16, 0), dst = b.tensor("dst", 16, 16);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  try {
    runOnce(t, b);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ipuLink.linksPerRail = 0"), std::string::npos) << e.what();
  }
}

// Probe 1: 256 KiB from one tile to a tile of the neighbouring IPU are bound
// by the tiles' exchange ports (65536 + 20), not the rung (300 + 262144 / 48).
TEST(TimingIpuLink, OneTileToARemoteTileIsBoundedByItsExchangePort) {
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 65536, 2), dst = b.tensor("dst", 65536, 8 + 5);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  EXPECT_EQ(runOnce(smallTarget(2), b), 262144 / 4 + 20u);
}

// The same probe on the ipu2 preset: 4 bytes per cycle at 1.33 GHz, 5.3 GB/s.
TEST(TimingIpuLink, OneTileToARemoteTileOnIpu2RunsAtThePortRate) {
  Target t = Target::preset("ipu2");
  t.set("ipuLink.numIpus", "2");
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 65536, 2), dst = b.tensor("dst", 65536, 1472 + 2);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  const Cycles cycles = runOnce(t, b);
  EXPECT_EQ(cycles, 262144 / 4 + 50u);  // exchange.latencyCycles 50
  EXPECT_LT(262144.0 / t.cyclesToSeconds(cycles), 5.4e9);
}

// Probe 2: IPU 0 sends B = 48 KiB to each of IPUs 1, 2 and 3 at once (ports
// made wide so that only the links bind). Routes: 0->1 the rung (48 B/cycle),
// 0->2 the rail (16), 0->3 over 1 (0->1->3), sharing the rung with 0->1.
//   0->1: 300 + 2B / 48 = 2348;  0->2: 300 + B / 16 = 3372;
//   0->3: 600 + max(2B / 48, B / 16) = 3672  -> the phase.
// IPU 0 then sends 3B in 3672 cycles, under its 4 links' 64 bytes per cycle.
TEST(TimingIpuLink, OneIpusOutgoingBandwidthIsBoundedByItsLinks) {
  Target t = smallTarget(4);
  t.set("exchange.bytesPerCycle", "1024");
  ExeBuilder b;
  const std::uint64_t floats = 12288;  // 48 KiB
  std::vector<ir::CopyRegion> regions;
  for (std::uint32_t to : {1u, 2u, 3u}) {
    const ir::Id src = b.tensor("src" + std::to_string(to), floats, to - 1);
    const ir::Id dst = b.tensor("dst" + std::to_string(to), floats, to * 8);
    regions.push_back({b.all(src), b.all(dst)});
  }
  entryCopy(b, regions);
  const Cycles cycles = runOnce(t, b);
  EXPECT_EQ(cycles, 3672u);
  EXPECT_LE(3.0 * 49152 / double(cycles), 64.0);
}

// The probe on the ipu2 preset: IPU 0 copies 16 MiB to each of IPUs
// 1, 2, 3 from 1024 tiles. The rail (2 x 32 GB/s) carries 0->2 and 1->3 of
// the route 0->1->3: 16 MiB / (64e9 / 1.33e9 B/cycle) + 2 hops, 192 GB/s in
// all, under the GC200's 320 GB/s (10 links x 32 GB/s).
TEST(TimingIpuLink, Ipu2IpuCopyingToThreeOthersStaysUnderItsLinks) {
  Target t = Target::preset("ipu2");
  t.set("ipuLink.numIpus", "4");
  ExeBuilder b;
  std::vector<ir::CopyRegion> regions;
  for (std::uint32_t to : {1u, 2u, 3u}) {
    const ir::Id src = spread(b, "src" + std::to_string(to), 4096, tileRange(0, 1024));
    const ir::Id dst = spread(b, "dst" + std::to_string(to), 4096, tileRange(to * 1472, 1024));
    regions.push_back({b.all(src), b.all(dst)});
  }
  entryCopy(b, regions);
  const Cycles cycles = runOnce(t, b);
  const double railBytesPerCycle = 2 * 32e9 / 1.33e9;
  EXPECT_EQ(cycles, 2 * 1000 + Cycles(std::ceil(16777216.0 / railBytesPerCycle)));
  const double rate = 3 * 16777216.0 / t.cyclesToSeconds(cycles);
  EXPECT_LE(rate, 320e9);
  EXPECT_NEAR(rate, 192e9, 0.01 * 192e9);
}

// Probe 3: a route pays each hop's latency. 64 bytes from IPU 0: to IPU 2 (one
// rail hop) 300 + 4; to IPU 4 (0->2->4) 600 + 4; with the rails wrapped, IPU 4
// is IPU 0's neighbour on a 6-IPU torus: 300 + 4 again.
// (One simulation per process: one probe per test.)
Cycles hopProbe(std::uint32_t toIpu, bool wrap) {
  Target t = smallTarget(6);
  t.set("ipuLink.railsWrap", wrap ? "1" : "0");
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 16, 0), dst = b.tensor("dst", 16, toIpu * 8);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  return runOnce(t, b);
}
TEST(TimingIpuLink, OneHopAlongARail) { EXPECT_EQ(hopProbe(2, false), 300 + 4u); }
TEST(TimingIpuLink, AMultiHopRouteCostsItsHops) { EXPECT_EQ(hopProbe(4, false), 600 + 4u); }
TEST(TimingIpuLink, WrappedRailsMakeTheLadderEndsNeighbours) { EXPECT_EQ(hopProbe(4, true), 300 + 4u); }

// Probe 4: --arch ipu1, the two IPUs of a C2 card: 16 MiB from 1024 tiles
// move at the pair's 192 GB/s (3 links x 64 GB/s): 1000 + 16 MiB / 120 B/cycle.
TEST(TimingIpuLink, Ipu1C2PairMovesAtItsPublishedBandwidth) {
  Target t = Target::preset("ipu1");
  t.set("ipuLink.numIpus", "2");
  ExeBuilder b;
  const ir::Id src = spread(b, "src", 4096, tileRange(0, 1024));
  const ir::Id dst = spread(b, "dst", 4096, tileRange(1216, 1024));
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  const Cycles cycles = runOnce(t, b);
  EXPECT_EQ(cycles, 1000 + Cycles(std::ceil(16777216.0 / 120.0)));
  EXPECT_NEAR(16777216.0 / t.cyclesToSeconds(cycles - 1000), 192e9, 1e-5 * 192e9);  // the last cycle rounds up
}

}  // namespace
}  // namespace ipusim::model::testing::test_timing_ipu_link
