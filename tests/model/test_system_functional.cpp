// Functional behaviour of the system: numbers really computed, bytes moved,
// synthetic mode timing-identical, data-dependent control flow.
#include "test_system_rig.hpp"

#include <cmath>

namespace ipusim::model::testing::test_system_functional {
namespace {

// in (host) -> x on tile 0 -> copy to tile 1 -> out = x + bias -> host.
// Repeated `steps` times, each step marked.
struct SmallGraph {
  ExeBuilder b;
  ir::Id in, out, x, xr, bias, y;
  explicit SmallGraph(std::uint64_t steps) {
    in = b.stream("in", ir::StreamDirection::HostToDevice, 4, 4);
    out = b.stream("out", ir::StreamDirection::DeviceToHost, 4, 4);
    x = b.tensor("x", 4, 0);
    xr = b.tensor("x_remote", 4, 1);
    bias = b.tensor("bias", 4, 1, ir::DType::Float, {10, 20, 30, 40});
    y = b.tensor("y", 4, 1);
    const ir::Id cs = b.computeSet("add_bias");
    b.add(cs, 1, xr, bias, y);
    const ir::Id step = b.sequence({b.streamCopy(in, b.all(x)), b.copy(b.all(x), b.all(xr)), b.execute(cs),
                                    b.streamCopy(out, b.all(y))},
                                   /*marksStep=*/true);
    b.entry("train", b.repeat(steps, step));
  }
};

TEST(SystemFunctional, SmallGraphComputesAndMovesTheNumbers) {
  SmallGraph g(3);
  Rig rig(smallTarget());
  Recorder rec;
  rig.system.load(g.b.exe);
  rig.system.addObserver(&rec);
  std::vector<std::vector<float>> results;
  rig.device = [&](Rig& r) { r.system.run(0); };
  rig.host = [&](Rig& r) {
    for (int i = 0; i < 3; ++i) r.system.stream(g.in).push(floatBytes({float(i), 1, 2, 3}));
    for (int i = 0; i < 3; ++i) results.push_back(asFloats(r.system.stream(g.out).pop()));
  };
  rig.simulate();
  ASSERT_EQ(results.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(results[i], (std::vector<float>{10.f + i, 21, 32, 43}));
  EXPECT_EQ(asFloats(rig.system.readTensor(g.xr)), (std::vector<float>{2, 1, 2, 3}));
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_EQ(rec.runs[0].steps, 3u);
  EXPECT_EQ(rec.steps, (std::vector<std::uint64_t>{0, 1, 2}));
}

// Both modes in one simulation (two systems side by side): identical cycles
// and identical phase events.
TEST(SystemFunctional, SyntheticAndFunctionalModesGiveIdenticalCycles) {
  SmallGraph g(5);
  const Target target = smallTarget();
  Rig functional(target, "functional"), synthetic(target, "synthetic");
  Recorder recF, recS;
  functional.system.load(g.b.exe, LoadOptions{true});
  synthetic.system.load(g.b.exe, LoadOptions{false});
  functional.system.addObserver(&recF);
  synthetic.system.addObserver(&recS);
  Cycles tF = 0, tS = 0;
  functional.device = [&](Rig& r) { tF = r.timedRun(0); };
  synthetic.device = [&](Rig& r) { tS = r.timedRun(0); };
  auto host = [&](Rig& r, bool withData) {
    for (int i = 0; i < 5; ++i) {
      sc_core::wait(cyclesToTime(700));  // a host slower than the device
      r.system.stream(g.in).push(withData ? floatBytes({1, 2, 3, 4}) : Bytes{});
    }
    for (int i = 0; i < 5; ++i) r.system.stream(g.out).pop();
  };
  functional.host = [&](Rig& r) { host(r, true); };
  synthetic.host = [&](Rig& r) { host(r, false); };
  functional.simulate();
  if (synthetic.error) std::rethrow_exception(synthetic.error);

  EXPECT_GT(tF, 5 * 700u);
  EXPECT_EQ(tF, tS);
  ASSERT_EQ(recF.phases.size(), recS.phases.size());
  for (std::size_t i = 0; i < recF.phases.size(); ++i) {
    EXPECT_EQ(recF.phases[i].start, recS.phases[i].start) << i;
    EXPECT_EQ(recF.phases[i].duration, recS.phases[i].duration) << i;
    EXPECT_EQ(recF.phases[i].kind, recS.phases[i].kind) << i;
  }
  // Synthetic mode holds no data: reads are zeros.
  EXPECT_EQ(asFloats(synthetic.system.readTensor(g.y)), (std::vector<float>(4, 0.f)));
  EXPECT_EQ(asFloats(functional.system.readTensor(g.y)), (std::vector<float>{11, 22, 33, 44}));
}

// RepeatWhileTrue reads its condition from tile memory: here a Bool flag the
// host streams in before each iteration (1, 1, 1, then 0).
TEST(SystemFunctional, RepeatWhileTrueRunsWhileTheConditionScalarIsNonZero) {
  ExeBuilder b;
  const ir::Id flags = b.stream("more", ir::StreamDirection::HostToDevice, 1, 4, ir::DType::Bool);
  const ir::Id flag = b.tensor("flag", 1, 0, ir::DType::Bool);
  const ir::Id acc = b.tensor("acc", 2, 0, ir::DType::Float, {0, 0});
  const ir::Id one = b.tensor("one", 2, 0, ir::DType::Float, {1, 2});
  const ir::Id cs = b.computeSet("accumulate");
  const ir::Id sum = b.tensor("sum", 2, 0);
  b.vertex(cs, "Add", 0, {{"in0", b.all(acc)}, {"in1", b.all(one)}, {"out", b.all(sum)}});
  const ir::Id body = b.sequence({b.execute(cs), b.copy(b.all(sum), b.all(acc))}, true);
  const ir::Id cond = b.streamCopy(flags, b.all(flag));
  ir::Program loop;
  loop.kind = ir::ProgramKind::RepeatWhileTrue;
  loop.children = {cond, body};
  loop.condition = b.all(flag);
  b.entry("loop", b.program(loop));
  Rig rig(smallTarget());
  Recorder rec;
  rec.detail = Detail::RunsOnly;
  rig.system.load(b.exe);
  rig.system.addObserver(&rec);
  rig.device = [&](Rig& r) { r.system.run(0); };
  rig.host = [&](Rig& r) {
    for (std::uint8_t more : {1, 1, 1, 0}) r.system.stream(flags).push(Bytes{more});
  };
  rig.simulate();
  EXPECT_EQ(asFloats(rig.system.readTensor(acc)), (std::vector<float>{3, 6}));
  ASSERT_EQ(rec.runs.size(), 1u);
  EXPECT_EQ(rec.runs[0].steps, 3u);
  EXPECT_TRUE(rec.phases.empty());  // RunsOnly: nothing inside the run
  EXPECT_TRUE(rec.programBegins.empty());
}

// Half tensors in tile memory: initial values stored as binary16 (rounded to
// nearest even), a float -> half -> float chain through typed codelets, and
// two bytes per element in the memory figure.
TEST(SystemFunctional, HalfTensorsAreTwoByteValuesThroughTypedCodelets) {
  ExeBuilder b;
  const ir::Id x = b.tensor("x", 4, 0, ir::DType::Float, {1.0, -2.5, 0.1, 70000.0});
  const ir::Id h = b.tensor("h", 4, 0, ir::DType::Half);
  const ir::Id r = b.tensor("r", 4, 0, ir::DType::Half);
  const ir::Id back = b.tensor("back", 4, 0, ir::DType::Float);
  const ir::Id w = b.tensor("w", 4, 0, ir::DType::Half, {0.5, 0.5, 0.5, 0.5});
  const ir::Id cs = b.computeSet("half_chain");
  b.vertex(cs, "Cast<float,half>", 0, {{"in", b.all(x)}, {"out", b.all(h)}});
  const ir::Id cs2 = b.computeSet("relu_half");
  b.vertex(cs2, "Relu<half>", 0, {{"in", b.all(h)}, {"out", b.all(r)}});
  const ir::Id cs3 = b.computeSet("widen");
  b.vertex(cs3, "Cast<half,float>", 0, {{"in", b.all(r)}, {"out", b.all(back)}});
  b.entry("main", b.sequence({b.execute(cs), b.execute(cs2), b.execute(cs3)}));
  Rig rig(smallTarget());
  rig.system.load(b.exe);
  rig.device = [&](Rig& rr) { rr.system.run(0); };
  rig.simulate();
  // 0.1 -> half 0x2e66 = 0.0999755859375; 70000 overflows to inf; Relu zeroes -2.5.
  const auto result = asFloats(rig.system.readTensor(back));
  EXPECT_EQ(result[0], 1.0f);
  EXPECT_EQ(result[1], 0.0f);
  EXPECT_EQ(result[2], 0.0999755859375f);
  EXPECT_TRUE(std::isinf(result[3]));
  const auto wBytes = rig.system.readTensor(w);
  ASSERT_EQ(wBytes.size(), 8u);
  EXPECT_EQ(wBytes[0], 0x00);  // 0.5 = 0x3800, little-endian
  EXPECT_EQ(wBytes[1], 0x38);
  // Tile 0: x 16 B, h 8 B, r 8 B, back 16 B, w 8 B, each at an 8-byte-aligned start.
  EXPECT_EQ(rig.system.tileMemoryUsage().at(0).peakBytes, 56u);
}

TEST(SystemFunctional, WriteTensorThenReadTensorRoundTrips) {
  ExeBuilder b;
  const ir::Id t = b.tensorMapped("t", 6, {{0, 0, 2, ir::TileInterval::kUnplaced}, {4, 2, 6, 64}});
  b.entry("nothing", b.sequence({}));
  Rig rig(smallTarget());
  rig.system.load(b.exe);
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  rig.system.writeTensor(t, values.data(), 24);
  EXPECT_EQ(asFloats(rig.system.readTensor(t)), values);
  // Tile 0: 2 floats placed by load() at 0; tile 4: 4 floats at the planned address 64.
  const auto use = rig.system.tileMemoryUsage();
  ASSERT_EQ(use.size(), 2u);
  EXPECT_EQ(use[0].tile, 0u);
  EXPECT_EQ(use[0].peakBytes, 8u);
  EXPECT_EQ(use[1].tile, 4u);
  EXPECT_EQ(use[1].peakBytes, 64u + 16u);
  ASSERT_EQ(use[1].categories.size(), 1u);
  EXPECT_EQ(use[1].categories[0].bytes, 16u);
  EXPECT_EQ(use[1].categories[0].category, "temporaries");
}

}  // namespace
}  // namespace ipusim::model::testing::test_system_functional
