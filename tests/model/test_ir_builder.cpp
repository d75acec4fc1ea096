// GraphBuilder: mapping helpers, address assignment and the memory check.
#include "test_ir_graphs.hpp"

namespace test_ir_builder {

using namespace ipusim::ir;
using namespace ipusim::ir::testing;

TEST(IrBuilder, MapLinearlySpreadsWholeGrainsOverTheTiles) {
  GraphBuilder b(smallTarget(8));
  const Id t = b.addTensor("t", {10, 10}, DType::Float);
  b.mapLinearly(t, GraphBuilder::tileRange(2, 3), 8);  // 13 grains -> 5 grains (40 elements) per tile
  const auto& m = b.tensor(t).mapping;
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].tile, 2u); EXPECT_EQ(m[0].begin, 0u);  EXPECT_EQ(m[0].end, 40u);
  EXPECT_EQ(m[1].tile, 3u); EXPECT_EQ(m[1].begin, 40u); EXPECT_EQ(m[1].end, 80u);
  EXPECT_EQ(m[2].tile, 4u); EXPECT_EQ(m[2].begin, 80u); EXPECT_EQ(m[2].end, 100u);
  // More tiles than grains: trailing tiles get nothing.
  b.mapLinearly(t, GraphBuilder::tileRange(0, 8), 64);
  ASSERT_EQ(b.tensor(t).mapping.size(), 2u);
  EXPECT_EQ(b.tensor(t).mapping[1].end, 100u);
}

TEST(IrBuilder, AssignsEightByteAlignedAddressesPerTileInTensorOrder) {
  GraphBuilder b(smallTarget());
  const Id a = b.addTensor("a", {3}, DType::Float);     // 12 bytes on tile 0
  const Id flag = b.addTensor("flag", {5}, DType::Bool);  // 5 bytes on tile 0
  const Id c = b.addTensor("c", {4}, DType::Int);       // [0,2) on tile 1, [2,4) on tile 0
  b.setTileMapping(a, 0);
  b.setTileMapping(flag, 0);
  b.mapInterval(c, 0, 2, 1);
  b.mapInterval(c, 2, 4, 0);
  const Executable exe = b.finish();
  EXPECT_EQ(exe.tensors[a].mapping[0].address, 0u);
  EXPECT_EQ(exe.tensors[flag].mapping[0].address, 16u);  // 12 rounded up to 16
  EXPECT_EQ(exe.tensors[c].mapping[0].address, 0u);      // first on tile 1
  EXPECT_EQ(exe.tensors[c].mapping[1].address, 24u);     // 16 + 5 = 21 -> 24
  ASSERT_EQ(b.memoryHighWater().size(), 2u);
  EXPECT_EQ(b.memoryHighWater()[0].bytes, 32u);  // tile 0: 24 + 8
  EXPECT_EQ(b.memoryHighWater()[1].bytes, 8u);
  EXPECT_EQ(exe.target, smallTarget().toJson());
}

TEST(IrBuilder, KeepsAddressesACallerPlannedAndAllocatesAboveThem) {
  GraphBuilder b(smallTarget());
  const Id t1 = b.addTensor("tmp1", {4}, DType::Float);
  const Id t2 = b.addTensor("tmp2", {2}, DType::Float);
  const Id w = b.addTensor("w", {2}, DType::Float);
  for (Id t : {t1, t2, w}) b.setTileMapping(t, 3);
  // Two not-always-live temporaries share one address, as a memory plan would decide.
  b.setAlwaysLive(t1, false);
  b.setAlwaysLive(t2, false);
  b.setIntervalAddress(t1, 0, 64);
  b.setIntervalAddress(t2, 0, 64);
  EXPECT_NE(errorOf([&] { b.setIntervalAddress(w, 0, 12); }).find("multiple of 8"), std::string::npos);
  EXPECT_NE(errorOf([&] { b.setIntervalAddress(w, 1, 0); }).find("'w' has 1 mapped intervals"), std::string::npos);
  const Executable exe = b.finish();
  EXPECT_EQ(exe.tensors[t1].mapping[0].address, 64u);
  EXPECT_EQ(exe.tensors[t2].mapping[0].address, 64u);
  EXPECT_EQ(exe.tensors[w].mapping[0].address, 80u);  // above the plan's highest byte (64 + 16)
}

TEST(IrBuilder, OutOfMemoryNamesTheTileItsNeedAndItsCapacity) {
  const auto build = [](bool allow) {
    GraphBuilder b(smallTarget());
    const Id big = b.addTensor("big", {160 * 1024}, DType::Float);  // 655360 bytes > 638976
    b.setTileMapping(big, 2);
    const Id small = b.addTensor("small", {2}, DType::Float);
    b.setTileMapping(small, 0);
    return std::make_pair(b.finish({allow}), b.memoryHighWater());
  };
  const std::string message = errorOf([&] { build(false); });
  EXPECT_NE(message.find("Out of memory in graph 'graph': cannot fit all variable data onto 1 of 4 tiles (tiles only "
                         "have 638976 bytes of memory); 16384 bytes over in total."),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Out of memory on tile 2: 655360 bytes used (16384 over"), std::string::npos) << message;
  EXPECT_NE(message.find("'big' (temporaries, 655360 bytes)"), std::string::npos) << message;
  const auto [exe, highWater] = build(true);
  EXPECT_EQ(exe.tensors[0].mapping[0].address, 0u);
  ASSERT_EQ(highWater.size(), 2u);
  EXPECT_EQ(highWater[1].tile, 2u);
  EXPECT_EQ(highWater[1].bytes, 655360u);
}

TEST(IrBuilder, RejectsBadCallsAtOnce) {
  GraphBuilder b(smallTarget());
  const Id t = b.addTensor("t", {8}, DType::Float);
  EXPECT_NE(errorOf([&] { b.setTileMapping(t, 4); }).find("tile 4 is out of range (the target has 4 tiles)"),
            std::string::npos);
  b.mapInterval(t, 0, 4, 0);
  EXPECT_NE(errorOf([&] { b.mapInterval(t, 2, 6, 1); }).find("overlaps elements [0,4) already on tile 0"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { b.mapInterval(t, 6, 9, 1); }).find("the tensor has 8 elements"), std::string::npos);
  EXPECT_NE(errorOf([&] { b.ref(t, 4, 9); }).find("outside tensor 't'"), std::string::npos);
  EXPECT_NE(errorOf([&] { b.setInitialValue(t, {1, 2}); }).find("has 8 elements, got 2 values"), std::string::npos);
  EXPECT_NE(errorOf([&] { b.repeat(3, 0); }).find("program id 0 is out of range"), std::string::npos);
  EXPECT_NE(errorOf([&] { b.copy(b.ref(t, 0, 2), b.ref(t, 4, 7)); }).find("src has 2 elements but dst has 3"),
            std::string::npos);
  // The mapping is incomplete: finish() says which elements are missing.
  EXPECT_NE(errorOf([&] { b.finish(); }).find("tensors[0] 't': elements [4,8) are not mapped to any tile"),
            std::string::npos);
}

TEST(IrBuilder, BuildsEveryProgramKind) {
  const Executable exe = everyKindGraph();
  ASSERT_EQ(exe.programs.size(), 12u);
  const Program& branch = exe.programs[exe.entryPoints[0].program];
  EXPECT_EQ(branch.kind, ProgramKind::If);
  ASSERT_EQ(branch.children.size(), 2u);
  EXPECT_EQ(exe.programs[branch.children[0]].kind, ProgramKind::RepeatWhileTrue);
  const Program& step = exe.programs[exe.entryPoints[1].program];
  EXPECT_TRUE(step.marksStep);
  EXPECT_EQ(exe.programs[step.children[2]].name, "fwd/matmul");  // execute() takes the compute set's name
  EXPECT_EQ(exe.programs[step.children[2]].debug.op, "matmul");
  EXPECT_EQ(exe.programs[step.children[0]].name, "infeed");      // streamCopy() takes the stream's name
}

}  // namespace test_ir_builder
