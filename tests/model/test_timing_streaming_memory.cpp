// Remote-buffer copies to and from Streaming Memory (model/hardware/
// streaming_memory.hpp): the bytes they move, their exact cycles (each IPU's
// latency + bytes at its link's rate, the longest IPU's, then an external
// sync), the phases they show, and the capacity a target has.
#include "test_system_rig.hpp"

#include "model/hardware/streaming_memory.hpp"

namespace ipusim::model::testing::test_timing_streaming_memory {
namespace {

// smallTarget (1 GHz) with Streaming Memory at 16 bytes per cycle and a 1000-cycle latency.
Target remoteTarget(std::uint32_t ipus = 1) {
  Target t = smallTarget(ipus);
  t.set("streamingMemory.bytesPerSecond", "16e9");
  t.set("streamingMemory.latencySeconds", "1e-6");
  return t;
}

ir::Id remoteBuffer(ExeBuilder& b, const std::string& name, std::uint64_t elements, std::vector<double> init = {}) {
  ir::RemoteBuffer r;
  r.id = ir::Id(b.exe.remoteBuffers.size());
  r.name = name;
  r.elements = elements;
  r.initialValue = std::move(init);
  b.exe.remoteBuffers.push_back(r);
  return r.id;
}

ir::Id remoteCopy(ExeBuilder& b, ir::Id buffer, ir::TensorRef tensor, bool store) {
  ir::Program p;
  p.kind = ir::ProgramKind::RemoteCopy;
  p.remoteBuffer = buffer;
  p.tensor = tensor;
  p.remoteStore = store;
  return b.program(p);
}

TEST(TimingStreamingMemory, ALoadGivesTheBuffersValuesInLatencyPlusBytesAtTheLinkRatePlusASync) {
  const Target target = remoteTarget();
  ExeBuilder b;
  const ir::Id x = b.tensorMapped("x", 1000, {{0, 0, 500, ir::TileInterval::kUnplaced},
                                               {1, 500, 1000, ir::TileInterval::kUnplaced}});
  std::vector<double> init(1000);
  for (int i = 0; i < 1000; ++i) init[i] = 0.25 * i;
  const ir::Id buffer = remoteBuffer(b, "state", 1000, init);
  b.entry("main", b.sequence({remoteCopy(b, buffer, b.all(x), false)}));
  Rig rig(target);
  Recorder rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();

  EXPECT_EQ(duration, 1000u + 4000 / 16 + 500);
  EXPECT_EQ(hardware::remoteTransferCycles(target, 4000), 1250u);
  const auto phases = rec.of(PhaseKind::StreamingMemory, 0);
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_EQ(phases[0].duration, duration);
  EXPECT_EQ(phases[0].bytes, 4000u);
  const std::vector<float> got = asFloats(rig.system.readTensor(x));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(got[i], float(init[i])) << i;
}

TEST(TimingStreamingMemory, AStoreThenALoadElsewhereMovesTheSameBytes) {
  ExeBuilder b;
  std::vector<double> values(300);
  for (int i = 0; i < 300; ++i) values[i] = 1.0 / (i + 1);
  const ir::Id x = b.tensor("x", 300, 2, ir::DType::Float, values);
  const ir::Id y = b.tensor("y", 300, 5);
  const ir::Id buffer = remoteBuffer(b, "state", 300);
  b.entry("main", b.sequence({remoteCopy(b, buffer, b.all(x), true), remoteCopy(b, buffer, b.all(y), false)}));
  Rig rig(remoteTarget());
  rig.system.load(b.exe);
  rig.device = [&](Rig& r) { r.timedRun(0); };
  rig.simulate();
  EXPECT_EQ(rig.system.readTensor(y), rig.system.readTensor(x));
}

TEST(TimingStreamingMemory, EveryIpuWaitsForTheIpuMovingTheMostBytes) {
  const Target target = remoteTarget(2);
  ExeBuilder b;
  // 750 elements (3000 bytes) on IPU 0's tile 1, 250 (1000 bytes) on IPU 1's tile 9.
  const ir::Id x = b.tensorMapped("x", 1000, {{1, 0, 750, ir::TileInterval::kUnplaced},
                                               {9, 750, 1000, ir::TileInterval::kUnplaced}});
  const ir::Id buffer = remoteBuffer(b, "state", 1000);
  b.entry("main", b.sequence({remoteCopy(b, buffer, b.all(x), true)}));
  Rig rig(target);
  Recorder rec;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  Cycles duration = 0;
  rig.device = [&](Rig& r) { duration = r.timedRun(0); };
  rig.simulate();
  EXPECT_EQ(duration, 1000u + 188 + 500);  // ceil(3000 / 16) = 188
  for (std::uint32_t ipu : {0u, 1u}) {
    const auto phases = rec.of(PhaseKind::StreamingMemory, ipu);
    ASSERT_EQ(phases.size(), 1u) << ipu;
    EXPECT_EQ(phases[0].duration, duration);
    EXPECT_EQ(phases[0].bytes, ipu == 0 ? 3000u : 1000u);
  }
}

TEST(TimingStreamingMemory, ATargetWithoutStreamingMemoryRefusesRemoteBuffersByName) {
  Target target = remoteTarget();
  target.set("streamingMemory.bytesPerIpu", "1000");
  ExeBuilder b;
  const ir::Id x = b.tensor("x", 300, 0);
  const ir::Id buffer = remoteBuffer(b, "adam_m", 300);
  b.entry("main", b.sequence({remoteCopy(b, buffer, b.all(x), false)}));
  Rig rig(target);
  try {
    rig.system.load(b.exe);
    FAIL() << "1200 bytes loaded into 1000 bytes of Streaming Memory";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("remote buffer 'adam_m'"), std::string::npos) << message;
    EXPECT_NE(message.find("1200 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("streamingMemory.bytesPerIpu"), std::string::npos) << message;
  }
  EXPECT_EQ(Target::preset("ipu1").streamingMemory.bytesPerIpu, 0.0);
}

// Found by the twelfth adversarial pass of issue 33: the refusal gave the
// running sum at the first buffer past the capacity as what the buffers
// need (here 1200 bytes of three buffers' 1800).
TEST(TimingStreamingMemory, TheRefusalGivesWhatAllTheIpusRemoteBuffersNeed) {
  Target target = remoteTarget();
  target.set("streamingMemory.bytesPerIpu", "1000");
  ExeBuilder b;
  const ir::Id x = b.tensor("x", 150, 0);
  std::vector<ir::Id> copies;
  for (const char* name : {"m", "v", "u"}) copies.push_back(remoteCopy(b, remoteBuffer(b, name, 150), b.all(x), true));
  b.entry("main", b.sequence(copies));
  Rig rig(target);
  try {
    rig.system.load(b.exe);
    FAIL() << "1800 bytes loaded into 1000 bytes of Streaming Memory";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("IPU 0's remote buffers need 1800 bytes of Streaming Memory (the largest, "
                                         "remote buffer 'm', 600 bytes), over streamingMemory.bytesPerIpu (1000 bytes"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ipusim::model::testing::test_timing_streaming_memory
