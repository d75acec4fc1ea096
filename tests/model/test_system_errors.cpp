// Bad input is a clear error naming what is wrong, never a crash.
#include "test_system_rig.hpp"

namespace ipusim::model::testing::test_system_errors {
namespace {

std::string loadError(const ir::Executable& exe, const Target& target, bool functional = true) {
  IpuSystem system("system", target);
  try {
    system.load(exe, LoadOptions{functional});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SystemErrors, UnknownCodeletIsNamed) {
  ExeBuilder b;
  const ir::Id a = b.tensor("a", 4, 0);
  const ir::Id cs = b.computeSet("cs");
  b.vertex(cs, "Addd", 0, {{"in0", b.all(a)}, {"in1", b.all(a)}, {"out", b.all(a)}});
  b.entry("main", b.execute(cs));
  EXPECT_NE(loadError(b.exe, smallTarget()).find("Addd"), std::string::npos);
}

TEST(SystemErrors, FieldSplitOverTwoTilesIsRejected) {
  ExeBuilder b;
  const ir::Id a = b.tensorMapped("a", 4, {{0, 0, 2, ir::TileInterval::kUnplaced}, {0, 2, 4, 1000}});
  const ir::Id c = b.tensor("c", 4, 0);
  const ir::Id cs = b.computeSet("cs");
  b.add(cs, 0, a, c, c);
  b.entry("main", b.execute(cs));
  const std::string error = loadError(b.exe, smallTarget());
  EXPECT_NE(error.find("in0"), std::string::npos) << error;
  EXPECT_NE(error.find("contiguously"), std::string::npos) << error;
}

TEST(SystemErrors, SyntheticModeRejectsDataDependentControlFlow) {
  ExeBuilder b;
  const ir::Id flag = b.tensor("flag", 1, 0, ir::DType::Bool);
  ir::Program p;
  p.kind = ir::ProgramKind::If;
  p.children = {b.sequence({})};
  p.condition = b.all(flag);
  b.entry("main", b.program(p));
  const std::string error = loadError(b.exe, smallTarget(), false);
  EXPECT_NE(error.find("synthetic"), std::string::npos) << error;
  EXPECT_NE(error.find("If"), std::string::npos) << error;
  EXPECT_EQ(loadError(b.exe, smallTarget(), true), "");
}

// Functional mode plans each renaming program's work on its own tensors:
// the tutorial's pipeline planned 16.6 MB a mini-batch, and the compile's
// bound let it have 1,990 (about 33 GB). Bounded before any is planned
// (adversarial pass 20); timing only plans each compute set once.
TEST(SystemErrors, FunctionalRenamedPlansAreBoundedBeforeTheyArePlanned) {
  ExeBuilder b;
  const ir::Id a = b.tensor("a", 4, 0), a1 = b.tensor("a [mini-batch 1]", 4, 0), c = b.tensor("c", 4, 0);
  const ir::Id cs = b.computeSet("cs");
  for (int v = 0; v < 2'000; ++v) b.add(cs, 0, a, a, c);
  std::vector<ir::Id> passes;
  for (int m = 0; m < 8'400; ++m) {
    passes.push_back(b.execute(cs));
    b.exe.programs.back().renames = {{a, a1}};
  }
  b.entry("main", b.sequence(passes));
  EXPECT_NE(loadError(b.exe, smallTarget())
                .find("executable '" + b.exe.name + "': functional mode plans each renaming program's work on its own "
                      "tensors: 8400 Execute and 0 Copy programs (ir::Program::renames, copyOf) lay out 16800000 "
                      "vertices and copy regions, over the limit of 16777216"),
            std::string::npos)
      << loadError(b.exe, smallTarget());
  EXPECT_EQ(loadError(b.exe, smallTarget(), false), "");
}

TEST(SystemErrors, InvalidTargetIsRejectedWhenTheSystemIsMade) {
  Target target = smallTarget(2);
  target.ipuLink.linkBytesPerSecond = 0;
  try {
    IpuSystem system("system", target);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ipuLink.linkBytesPerSecond"), std::string::npos) << e.what();
  }
}

TEST(SystemErrors, HostPushingTheWrongSizeIsNamedAtTheCopy) {
  ExeBuilder b;
  const ir::Id s = b.stream("infeed", ir::StreamDirection::HostToDevice, 4);
  const ir::Id x = b.tensor("x", 4, 0);
  b.entry("main", b.streamCopy(s, b.all(x)));
  Rig rig(smallTarget());
  rig.system.load(b.exe);
  rig.device = [&](Rig& r) {
    r.system.stream("infeed").push(Bytes(3));
    r.system.run(0);
  };
  try {
    rig.simulate();
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("infeed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected 16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rig.system.stream("outfeed"), std::invalid_argument);
}

}  // namespace
}  // namespace ipusim::model::testing::test_system_errors
