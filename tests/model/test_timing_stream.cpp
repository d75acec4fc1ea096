// Timing of host stream copies: Begin (waiting for the host), host service
// (the host hands the buffer over), Mid (the host-link transfer), End
// (completion sync). Exact cycles.
#include "test_system_rig.hpp"

namespace ipusim::model::testing::test_timing_stream {
namespace {

// Host service and Mid of a copy of `bytes`: link latency + bytes at 16 B/cycle, + host service.
Cycles midCycles(const Target& t, std::uint64_t bytes, Cycles service) {
  return t.secondsToCycles(t.hostLink.latencySeconds) + (bytes + 15) / 16 + service;
}

TEST(TimingStream, HostToDeviceCopyWaitsForALatePushThenTransfersThenSyncs) {
  const Target target = smallTarget();
  ExeBuilder b;
  const ir::Id s = b.stream("infeed", ir::StreamDirection::HostToDevice, 1000);  // 4000 bytes
  const ir::Id x = b.tensorMapped("x", 1000, {{0, 0, 500, ir::TileInterval::kUnplaced},
                                               {1, 500, 1000, ir::TileInterval::kUnplaced}});
  b.entry("main", b.streamCopy(s, b.all(x)));
  Rig rig(target);
  Recorder rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  rig.system.stream("infeed").setHostServiceCycles(70);
  std::vector<float> data(1000);
  for (int i = 0; i < 1000; ++i) data[i] = float(i) * 0.5f;
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.host = [&](Rig& r) {
    sc_core::wait(cyclesToTime(1234));  // the host is late
    r.system.stream(s).push(floatBytes(data));
  };
  rig.simulate();

  const Cycles mid = midCycles(target, 4000, 70);
  EXPECT_EQ(mid, 1000 + 250 + 70u);
  EXPECT_EQ(duration, 1234 + mid + 500);
  ASSERT_EQ(rec.copies.size(), 4u);
  EXPECT_EQ(rec.copies[0].phase, StreamCopyPhase::Begin);
  EXPECT_EQ(rec.copies[0].duration, 1234u);
  // To the device the host hands its buffer over first, then the bytes cross.
  EXPECT_EQ(rec.copies[1].phase, StreamCopyPhase::HostService);
  EXPECT_EQ(rec.copies[1].start, 1234u);
  EXPECT_EQ(rec.copies[1].duration, 70u);
  EXPECT_EQ(rec.copies[1].bytes, 0u);
  EXPECT_EQ(rec.copies[2].phase, StreamCopyPhase::Mid);
  EXPECT_EQ(rec.copies[2].start, 1234u + 70u);
  EXPECT_EQ(rec.copies[2].duration, 1000u + 250u);
  EXPECT_EQ(rec.copies[2].bytes, 4000u);
  EXPECT_EQ(rec.copies[3].phase, StreamCopyPhase::End);
  EXPECT_EQ(rec.copies[3].duration, 500u);
  ASSERT_EQ(rec.of(PhaseKind::StreamCopy, 0).size(), 1u);
  EXPECT_EQ(rec.of(PhaseKind::StreamCopy, 0)[0].duration, duration);
  EXPECT_EQ(asFloats(rig.system.readTensor(x)), data);  // scattered over both tiles
}

TEST(TimingStream, DelayNextCopyAddsToBeginOnceAndAReadyFifoDoesNotWait) {
  const Target target = smallTarget();
  ExeBuilder b;
  const ir::Id s = b.stream("infeed", ir::StreamDirection::HostToDevice, 16, 2);
  const ir::Id x = b.tensor("x", 16, 0);
  const ir::Id copy = b.streamCopy(s, b.all(x));
  b.entry("main", b.sequence({copy, copy}));
  Rig rig(target);
  rig.system.load(b.exe);
  std::vector<Cycles> runs;
  rig.device = [&](Rig& r) {
    r.system.stream(s).push(Bytes(64));
    r.system.stream(s).push(Bytes(64));
    r.system.stream(s).delayNextCopy(400);
    runs.push_back(r.timedRun(0));
  };
  rig.simulate();
  const Cycles one = midCycles(target, 64, 0) + 500;
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0], 400 + 2 * one);
}

TEST(TimingStream, CallbackStreamIsAlwaysReady) {
  const Target target = smallTarget();
  ExeBuilder b;
  const ir::Id s = b.stream("in", ir::StreamDirection::HostToDevice, 4);
  const ir::Id x = b.tensor("x", 4, 0);
  b.entry("main", b.streamCopy(s, b.all(x)));
  Rig rig(target);
  rig.system.load(b.exe);
  int calls = 0;
  rig.system.stream(s).connect([&](Bytes& copy) {
    ++calls;
    copy = floatBytes({1, 2, 3, 4});
  });
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(duration, midCycles(target, 16, 0) + 500);
  EXPECT_EQ(asFloats(rig.system.readTensor(x)), (std::vector<float>{1, 2, 3, 4}));
}

// An outfeed of depth 1 that the host drains late blocks the second copy's Begin.
TEST(TimingStream, DeviceToHostCopyWaitsWhileTheHostFifoIsFull) {
  const Target target = smallTarget();
  ExeBuilder b;
  const ir::Id s = b.stream("outfeed", ir::StreamDirection::DeviceToHost, 8, 1);
  const ir::Id y = b.tensor("y", 8, 3, ir::DType::Float, {1, 2, 3, 4, 5, 6, 7, 8});
  const ir::Id copy = b.streamCopy(s, b.all(y));
  b.entry("main", b.sequence({copy, copy}));
  Rig rig(target);
  Recorder rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  Cycles duration = 0;
  std::vector<std::vector<float>> received;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.host = [&](Rig& r) {
    sc_core::wait(cyclesToTime(10000));
    received.push_back(asFloats(r.system.stream(s).pop()));
    received.push_back(asFloats(r.system.stream(s).pop()));
  };
  rig.simulate();
  const Cycles one = midCycles(target, 32, 0) + 500;
  ASSERT_LT(one, 10000u);
  // Copy 1 at 0; copy 2 begins at `one` and waits until the host pops at 10000.
  EXPECT_EQ(duration, 10000 + one);
  ASSERT_EQ(rec.copies.size(), 6u);
  EXPECT_EQ(rec.copies[3].phase, StreamCopyPhase::Begin);
  EXPECT_EQ(rec.copies[3].duration, 10000 - one);
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[1], (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
}

// To the host the bytes cross first, then the host takes the buffer; what it
// pops carries the cycle, run and step that produced it.
TEST(TimingStream, DeviceToHostServiceFollowsTheTransferAndTheCopyCarriesItsOrigin) {
  const Target target = smallTarget();
  ExeBuilder b;
  const ir::Id s = b.stream("outfeed", ir::StreamDirection::DeviceToHost, 8, 4);
  const ir::Id y = b.tensor("y", 8, 3, ir::DType::Float, {1, 2, 3, 4, 5, 6, 7, 8});
  b.entry("main", b.repeat(2, b.sequence({b.streamCopy(s, b.all(y))}, /*marksStep=*/true)));
  Rig rig(target);
  Recorder rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  rig.system.stream("outfeed").setHostServiceCycles(40);
  std::vector<DeviceOrigin> origins;
  rig.device = [&](Rig& r) {
    r.system.run(0);
    r.system.run(0);
    for (int i = 0; i < 4; ++i) {
      r.system.stream(s).pop();
      origins.push_back(r.system.stream(s).lastOrigin());
    }
  };
  rig.simulate();
  const Cycles transfer = midCycles(target, 32, 0);  // 1000 + 2
  const Cycles copy = transfer + 40 + 500;
  ASSERT_EQ(rec.copies.size(), 16u);
  EXPECT_EQ(rec.copies[1].phase, StreamCopyPhase::Mid);
  EXPECT_EQ(rec.copies[1].start, 0u);
  EXPECT_EQ(rec.copies[1].duration, transfer);
  EXPECT_EQ(rec.copies[2].phase, StreamCopyPhase::HostService);
  EXPECT_EQ(rec.copies[2].start, transfer);
  EXPECT_EQ(rec.copies[2].duration, 40u);
  ASSERT_EQ(origins.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(origins[i].at, i * copy + transfer) << i;  // delivered at the end of its transfer
    EXPECT_EQ(origins[i].run, std::int64_t(i / 2)) << i;
    EXPECT_EQ(origins[i].step, std::int64_t(i)) << i;   // steps are numbered across runs
  }
}

TEST(TimingStream, SyntheticModeIgnoresPayloadsButKeepsTiming) {
  const Target target = smallTarget();
  ExeBuilder b;
  const ir::Id s = b.stream("infeed", ir::StreamDirection::HostToDevice, 1000);
  const ir::Id x = b.tensor("x", 1000, 0);
  b.entry("main", b.streamCopy(s, b.all(x)));
  Rig rig(target);
  rig.system.load(b.exe, LoadOptions{false});
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.host = [&](Rig& r) {
    sc_core::wait(cyclesToTime(1234));
    r.system.stream(s).push(Bytes{});  // no data in synthetic mode
  };
  rig.simulate();
  EXPECT_EQ(duration, 1234 + midCycles(target, 4000, 0) + 500);
}

}  // namespace
}  // namespace ipusim::model::testing::test_timing_stream
