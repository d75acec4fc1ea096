// Timing of Copy programs (exchange phases, IPU-Link copies): exact cycles.
#include "test_system_rig.hpp"

namespace ipusim::model::testing::test_timing_exchange {
namespace {

// Runs entry 0 of `b` on `target` and returns its cycles; `rec` records phases.
Cycles runOnce(const Target& target, const ExeBuilder& b, Recorder& rec, bool functional = true) {
  Rig rig(target);
  rig.system.load(b.exe, LoadOptions{functional});
  rig.system.addObserver(&rec);
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();
  return duration;
}

TEST(TimingExchange, FourKiBBetweenTwoTilesTakesBytesOverBandwidthPlusLatency) {
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 1024, 0), dst = b.tensor("dst", 1024, 1);  // 4096 bytes
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  rec.detail = Detail::Tiles;
  EXPECT_EQ(runOnce(smallTarget(), b, rec), 4096 / 4 + 20u);
  ASSERT_EQ(rec.of(PhaseKind::Exchange, 0).size(), 1u);
  EXPECT_EQ(rec.of(PhaseKind::Exchange, 0)[0].duration, 4096 / 4 + 20u);
  EXPECT_EQ(rec.of(PhaseKind::Exchange, 0)[0].bytes, 4096u);
  ASSERT_EQ(rec.statics.size(), 1u);
  EXPECT_EQ(rec.statics[0].kind, PhaseKind::Exchange);
  EXPECT_EQ(rec.statics[0].bytes, 4096u);
  EXPECT_EQ(rec.statics[0].tileCycles[0], 1024u);    // the sender
  EXPECT_EQ(rec.statics[0].tileCycles[1], 1024u);    // the receiver
  EXPECT_EQ(rec.statics[0].tileVertices[1], 4096u);  // bytes received
}

TEST(TimingExchange, OddByteCountRoundsUp) {
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 5, 0, ir::DType::Bool), dst = b.tensor("dst", 5, 2, ir::DType::Bool);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(), b, rec), 2 + 20u);  // ceil(5 / 4) + latency
}

// The slowest tile sets the phase: a tile receiving from two senders.
TEST(TimingExchange, PhaseIsMaxOverTilesOfSentOrReceived) {
  ExeBuilder b;
  // src: 256 floats on tile 0, 256 on tile 1; dst all 512 on tile 2.
  const ir::Id src = b.tensorMapped("src", 512, {{0, 0, 256, ir::TileInterval::kUnplaced},
                                                 {1, 256, 512, ir::TileInterval::kUnplaced}});
  const ir::Id dst = b.tensor("dst", 512, 2);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(), b, rec), 2048 / 4 + 20u);  // tile 2 receives 2048 bytes
}

// A broadcast view (the same 1 KiB of tile 0 aliased twice) copied to a pair
// of tiles (2, 3): the sender sends it once, each receiver receives 1 KiB.
TEST(TimingExchange, BroadcastToPairedTilesCostsTheSenderOnce) {
  ExeBuilder b;
  const ir::Id src = b.tensorMapped("row", 512, {{0, 0, 256, 0}, {0, 256, 512, 0}});
  const ir::Id dst = b.tensorMapped("rows", 512, {{2, 0, 256, 0}, {3, 256, 512, 0}});
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  rec.detail = Detail::Tiles;
  EXPECT_EQ(runOnce(smallTarget(), b, rec), 1024 / 4 + 20u);
  EXPECT_EQ(rec.statics.at(0).tileCycles[0], 256u);
}

// The same broadcast to tiles 3 and 4 (different pairs): with multicast
// both listen to one send of 1 KiB; without, the sender sends 2 KiB.
TEST(TimingExchange, BroadcastToUnpairedTilesIsOneMulticastSend) {
  ExeBuilder b;
  const ir::Id src = b.tensorMapped("row", 512, {{0, 0, 256, 0}, {0, 256, 512, 0}});
  const ir::Id dst = b.tensorMapped("rows", 512, {{3, 0, 256, 0}, {4, 256, 512, 0}});
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(), b, rec), 1024 / 4 + 20u);
}

TEST(TimingExchange, BroadcastToUnpairedTilesWithoutMulticastCostsTheSenderTwice) {
  Target target = smallTarget();
  target.set("exchange.multicast", "0");
  ExeBuilder b;
  const ir::Id src = b.tensorMapped("row", 512, {{0, 0, 256, 0}, {0, 256, 512, 0}});
  const ir::Id dst = b.tensorMapped("rows", 512, {{3, 0, 256, 0}, {4, 256, 512, 0}});
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(target, b, rec), 2048 / 4 + 20u);
}

// One 256-byte row multicast to six tiles: one send of 256 bytes, each
// receiver takes 256 (a batch normalization's per-channel broadcast).
TEST(TimingExchange, MulticastToManyTilesCostsOneSend) {
  ExeBuilder b;
  std::vector<ir::TileInterval> srcMap, dstMap;
  for (std::uint32_t k = 0; k < 6; ++k) {
    srcMap.push_back({0, k * 64, (k + 1) * 64, 0});  // every interval the same bytes of tile 0
    dstMap.push_back({2 + k, k * 64, (k + 1) * 64, 0});
  }
  const ir::Id src = b.tensorMapped("row", 6 * 64, srcMap);
  const ir::Id dst = b.tensorMapped("rows", 6 * 64, dstMap);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(), b, rec), 256 / 4 + 20u);
}

// pairedReceiveFactor 1 disables the pairing without multicast: the pair costs the sender 2B.
TEST(TimingExchange, PairedReceiveFactorOneSendsTwice) {
  Target target = smallTarget();
  target.set("exchange.multicast", "0");
  target.set("exchange.pairedReceiveFactor", "1");
  ExeBuilder b;
  const ir::Id src = b.tensorMapped("row", 512, {{0, 0, 256, 0}, {0, 256, 512, 0}});
  const ir::Id dst = b.tensorMapped("rows", 512, {{2, 0, 256, 0}, {3, 256, 512, 0}});
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(target, b, rec), 2048 / 4 + 20u);
}

TEST(TimingExchange, CopyWithinOneTileIsAMemcpyAtVectorWidth) {
  ExeBuilder b;
  const ir::Id src = b.tensor("a", 1000, 5), dst = b.tensor("b", 1000, 5);  // 4000 bytes
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(), b, rec), 4000 / 8u);  // no exchange latency: nothing crosses tiles
}

// IPU-Link (tests/model/test_timing_ipu_link.cpp has the fabric's probes):
// 4 KiB from tile 2 to tile 10 (IPU 1) pass through both tiles' exchange
// ports, 4096 / 4 + 20 = 1044, longer than the rung's 300 + ceil(4096 / 48) = 386.
TEST(TimingExchange, CopyBetweenIpusGoesOverTheIpuLink) {
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 1024, 2), dst = b.tensor("dst", 1024, 8 + 2);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(2), b, rec), 4096 / 4 + 20u);
  ASSERT_EQ(rec.of(PhaseKind::IpuLinkCopy, 0).size(), 1u);
  ASSERT_EQ(rec.of(PhaseKind::IpuLinkCopy, 1).size(), 1u);
  EXPECT_EQ(rec.of(PhaseKind::IpuLinkCopy, 1)[0].bytes, 4096u);
}

// A phase with on-chip and link parts lasts the longer of the two: 64 KiB
// on-chip (tile 0 -> 1) and 32 KiB over a rail (tile 2 -> IPU 2's tile 2,
// 16 bytes per cycle): max(65536 / 4 + 20, 32768 / 4 + 20, 300 + 32768 / 16).
TEST(TimingExchange, MixedPhaseLastsTheLongerOfOnChipAndLinkParts) {
  ExeBuilder b;
  const ir::Id src = b.tensorMapped("src", 24576, {{0, 0, 16384, ir::TileInterval::kUnplaced},
                                                   {2, 16384, 24576, ir::TileInterval::kUnplaced}});
  const ir::Id dst = b.tensorMapped("dst", 24576, {{1, 0, 16384, ir::TileInterval::kUnplaced},
                                                   {16 + 2, 16384, 24576, ir::TileInterval::kUnplaced}});
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(3), b, rec), 65536 / 4 + 20u);
}

TEST(TimingExchange, SyntheticModeGivesTheSameExchangeCycles) {
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 1024, 0), dst = b.tensor("dst", 1024, 1);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(), b, rec, false), 4096 / 4 + 20u);
}

ir::Id multiCopy(ExeBuilder& b, std::vector<ir::CopyRegion> regions) {
  ir::Program p;
  p.kind = ir::ProgramKind::Copy;
  p.regions = std::move(regions);
  return b.program(p);
}

// A 2-region Copy is ONE phase: B1 + B2 bytes received by one tile take
// ceil((B1 + B2) / 4) + latency, not two latencies (and regions may differ in dtype).
TEST(TimingExchange, TwoRegionCopyToOneTileIsOnePhaseOfTheSummedBytes) {
  ExeBuilder b;
  const ir::Id a = b.tensor("a", 250, 0);                    // B1 = 1000 bytes on tile 0
  const ir::Id flags = b.tensor("flags", 2003, 1, ir::DType::Bool);  // B2 = 2003 bytes on tile 1
  const ir::Id da = b.tensor("da", 250, 2), dflags = b.tensor("dflags", 2003, 2, ir::DType::Bool);
  b.entry("main", multiCopy(b, {{b.all(a), b.all(da)}, {b.all(flags), b.all(dflags)}}));
  Recorder rec;
  rec.detail = Detail::Tiles;
  EXPECT_EQ(runOnce(smallTarget(), b, rec), (1000 + 2003 + 3) / 4 + 20u);
  ASSERT_EQ(rec.of(PhaseKind::Exchange, 0).size(), 1u);
  EXPECT_EQ(rec.of(PhaseKind::Exchange, 0)[0].bytes, 3003u);
  ASSERT_EQ(rec.statics.size(), 1u);
  EXPECT_EQ(rec.statics[0].tileCycles[0], 250u);   // sender of region 0
  EXPECT_EQ(rec.statics[0].tileCycles[1], 501u);   // sender of region 1: ceil(2003 / 4)
  EXPECT_EQ(rec.statics[0].tileCycles[2], 751u);   // the receiver: both regions
}

// A gather: strided columns of a 4x4 row-major matrix (tile 0) into one
// contiguous buffer on tile 1, and a local region on tile 1, in one Copy.
TEST(TimingExchange, MultiRegionGatherMovesEveryRegionAndAddsLocalMemcpy) {
  ExeBuilder b;
  std::vector<double> values;
  for (int i = 0; i < 16; ++i) values.push_back(i);
  const ir::Id m = b.tensor("m", 16, 0, ir::DType::Float, values);
  const ir::Id local = b.tensor("local", 4, 1, ir::DType::Float, {100, 101, 102, 103});
  const ir::Id buffer = b.tensor("buffer", 12, 1);
  std::vector<ir::CopyRegion> regions;
  for (std::uint64_t row = 0; row < 4; ++row)  // columns 1..2 of each row
    regions.push_back({{m, row * 4 + 1, row * 4 + 3}, {buffer, row * 2, row * 2 + 2}});
  regions.push_back({{local, 0, 4}, {buffer, 8, 12}});
  b.entry("main", multiCopy(b, regions));
  Rig rig(smallTarget());
  rig.system.load(b.exe);
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();
  // Tile 1 receives 32 bytes (8 cycles) and copies 16 bytes locally
  // (ceil(16 / vectorBytes 8) = 2 cycles): 10 + latency.
  EXPECT_EQ(duration, 32 / 4 + 16 / 8 + 20u);
  EXPECT_EQ(asFloats(rig.system.readTensor(buffer)),
            (std::vector<float>{1, 2, 5, 6, 9, 10, 13, 14, 100, 101, 102, 103}));
}

// A 2-D region is the same exchange as its rows listed one by one: a block
// (columns 2-5 of an 8 x 8 matrix whose rows 0-3 are on tile 0 and 4-7 on
// tile 1) gathered to tiles 2 and 3, a pair (each sender sends it once for
// both). The planner walks a 2-D region's rows without listing them; the two
// tests below (one simulation per process) expect the same figures.
void expectBlockGatheredToAPair(bool asRows) {
  ExeBuilder b;
  std::vector<double> values;
  for (int i = 0; i < 64; ++i) values.push_back(i);
  const ir::Id m = b.tensorMapped(
      "m", 64, {{0, 0, 32, ir::TileInterval::kUnplaced}, {1, 32, 64, ir::TileInterval::kUnplaced}},
      ir::DType::Float, values);
  const ir::Id even = b.tensor("even", 32, 2), odd = b.tensor("odd", 32, 3);
  std::vector<ir::CopyRegion> regions;
  for (ir::Id dst : {even, odd}) {
    const ir::CopyRegion block{{m, 2, 6}, {dst, 0, 4}, 8, 8, 4};
    if (asRows)
      ir::expandRegion(block, regions);
    else
      regions.push_back(block);
  }
  b.entry("main", multiCopy(b, regions));
  Rig rig(smallTarget());
  rig.system.load(b.exe);
  Recorder rec;
  rec.detail = Detail::Tiles;
  rig.system.addObserver(&rec);
  Cycles cycles = 0;
  rig.device = [&](Rig& r) { cycles = r.timedRun(0); };
  rig.simulate();
  // Each sender sends its 4 rows x 16 bytes once for the pair: 64 bytes;
  // each receiver receives 8 rows x 16 bytes: 128 bytes, 32 cycles.
  EXPECT_EQ(cycles, 128 / 4 + 20u);
  ASSERT_EQ(rec.statics.size(), 1u);
  EXPECT_EQ(rec.statics[0].tileCycles[0], 64 / 4u);
  EXPECT_EQ(rec.statics[0].tileCycles[1], 64 / 4u);
  EXPECT_EQ(rec.statics[0].tileCycles[2], 128 / 4u);
  EXPECT_EQ(rec.statics[0].tileCycles[3], 128 / 4u);
  std::vector<float> expected;
  for (int row = 0; row < 8; ++row)
    for (int col = 2; col < 6; ++col) expected.push_back(float(row * 8 + col));
  EXPECT_EQ(asFloats(rig.system.readTensor(even)), expected);
  EXPECT_EQ(asFloats(rig.system.readTensor(odd)), expected);
}

TEST(TimingExchange, A2DRegionBlockGatheredToAPair) { expectBlockGatheredToAPair(false); }
TEST(TimingExchange, TheSameBlockAsRowsListedOneByOne) { expectBlockGatheredToAPair(true); }

// Validation refuses a region writing what another region of the same Copy reads.
TEST(TimingExchange, MultiRegionCopyReadingAnotherRegionsDestinationIsRefused) {
  ExeBuilder b;
  const ir::Id t = b.tensor("t", 8, 0), u = b.tensor("u", 8, 1);
  b.entry("main", multiCopy(b, {{{t, 0, 4}, {u, 0, 4}}, {{u, 2, 6}, {t, 4, 8}}}));
  Rig rig(smallTarget());
  try {
    rig.system.load(b.exe);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("regions[1].src [2,6) of tensor 'u' overlaps regions[0].dst [0,4)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ipusim::model::testing::test_timing_exchange
