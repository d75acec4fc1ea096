// Timing of Copy programs (exchange phases, IPU-Link copies): exact cycles.
#include "test_system_rig.hpp"

namespace ipusim::model::testing {
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

// The same broadcast to tiles 3 and 4 (different pairs): the sender sends 2 KiB.
TEST(TimingExchange, BroadcastToUnpairedTilesCostsTheSenderTwice) {
  ExeBuilder b;
  const ir::Id src = b.tensorMapped("row", 512, {{0, 0, 256, 0}, {0, 256, 512, 0}});
  const ir::Id dst = b.tensorMapped("rows", 512, {{3, 0, 256, 0}, {4, 256, 512, 0}});
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(), b, rec), 2048 / 4 + 20u);
}

// pairedReceiveFactor 1 disables the pairing: the pair costs the sender 2B.
TEST(TimingExchange, PairedReceiveFactorOneSendsTwice) {
  Target target = smallTarget();
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

// IPU-Link: latency + ceil(B / (bytesPerSecond / clockHz)) = 300 + 4096 / 64.
TEST(TimingExchange, CopyBetweenIpusGoesOverTheIpuLink) {
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 1024, 2), dst = b.tensor("dst", 1024, 8 + 2);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(2), b, rec), 300 + 4096 / 64u);
  ASSERT_EQ(rec.of(PhaseKind::IpuLinkCopy, 0).size(), 1u);
  ASSERT_EQ(rec.of(PhaseKind::IpuLinkCopy, 1).size(), 1u);
  EXPECT_EQ(rec.of(PhaseKind::IpuLinkCopy, 1)[0].bytes, 4096u);
}

// A phase with on-chip and link parts lasts the longer of the two.
TEST(TimingExchange, MixedPhaseLastsTheLongerOfOnChipAndLinkParts) {
  ExeBuilder b;
  // 64 KiB on-chip (tile 0 -> 1) and 4 KiB over the link (tile 2 -> tile 10).
  const ir::Id src = b.tensorMapped("src", 17408, {{0, 0, 16384, ir::TileInterval::kUnplaced},
                                                   {2, 16384, 17408, ir::TileInterval::kUnplaced}});
  const ir::Id dst = b.tensorMapped("dst", 17408, {{1, 0, 16384, ir::TileInterval::kUnplaced},
                                                   {10, 16384, 17408, ir::TileInterval::kUnplaced}});
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(2), b, rec), std::max<Cycles>(65536 / 4 + 20, 300 + 4096 / 64));
}

TEST(TimingExchange, SyntheticModeGivesTheSameExchangeCycles) {
  ExeBuilder b;
  const ir::Id src = b.tensor("src", 1024, 0), dst = b.tensor("dst", 1024, 1);
  b.entry("main", b.copy(b.all(src), b.all(dst)));
  Recorder rec;
  EXPECT_EQ(runOnce(smallTarget(), b, rec, false), 4096 / 4 + 20u);
}

}  // namespace
}  // namespace ipusim::model::testing
