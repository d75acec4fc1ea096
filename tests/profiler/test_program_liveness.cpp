// Liveness derived from the executable: program order and first/last use of
// each tensor (profiler/recorder/program_liveness.hpp), and the FLOP count
// convention (profiler/recorder/flop_count.hpp).
#include "model/ir/graph_builder.hpp"
#include "profiler/recorder/flop_count.hpp"
#include "profiler/recorder/program_liveness.hpp"

#include <gtest/gtest.h>

namespace ipusim::profiler::test_program_liveness {
namespace {

using ir::DType;
using ir::Id;

model::Target fourTiles() {
  model::Target t = model::Target::preset("ipu2");
  t.set("tile.tilesPerIpu", "4");
  return t;
}

struct Chain {
  ir::Executable exe;
  Id weights, first, second, entry;
  std::vector<Id> leaves;  // execute(a), copy, execute(b), sync, execute(c)
};

// weights (always live) are used at steps 0 and 4; `first` from 0 to 1,
// `second` from 1 to 2; the body is repeated and called, and still counted once.
Chain chain() {
  ir::GraphBuilder b(fourTiles(), "chain");
  Chain c;
  c.weights = b.addTensor("w", {4}, DType::Float, "weights");
  c.first = b.addTensor("t1", {4}, DType::Float, "activations");
  c.second = b.addTensor("t2", {4}, DType::Float, "activations");
  for (Id t : {c.weights, c.first, c.second}) b.setTileMapping(t, 0);
  b.setAlwaysLive(c.first, false);
  b.setAlwaysLive(c.second, false);
  const Id a = b.addComputeSet("a");
  b.addVertex(a, "Add", 0, {{"in0", b.ref(c.weights)}, {"in1", b.ref(c.weights)}, {"out", b.ref(c.first)}});
  const Id bcs = b.addComputeSet("b");
  b.addVertex(bcs, "Relu", 0, {{"in", b.ref(c.second)}, {"out", b.ref(c.second)}});
  const Id ccs = b.addComputeSet("c");
  b.addVertex(ccs, "Relu", 0, {{"in", b.ref(c.weights)}, {"out", b.ref(c.weights)}});
  c.leaves = {b.execute(a), b.copy(b.ref(c.first), b.ref(c.second)), b.execute(bcs), b.sync(ir::SyncType::Internal),
              b.execute(ccs)};
  const Id body = b.sequence(c.leaves, "body");
  const Id loop = b.repeat(3, body, "loop");
  c.entry = b.sequence({loop, b.call(loop)}, "main");
  b.addEntryPoint("main", c.entry);
  c.exe = b.finish();
  return c;
}

TEST(ProgramLiveness, LeavesAreNumberedOnceInProgramOrder) {
  const Chain c = chain();
  const ProgramLiveness l = programLiveness(c.exe, c.exe.entryPoints[0].program);
  EXPECT_EQ(l.order, c.leaves);
}

TEST(ProgramLiveness, EachTensorSpansItsFirstToLastUse) {
  const Chain c = chain();
  const ProgramLiveness l = programLiveness(c.exe, c.exe.entryPoints[0].program);
  ASSERT_EQ(l.lifetimes.size(), 3u);
  std::map<Id, std::pair<std::uint64_t, std::uint64_t>> span;
  for (const auto& t : l.lifetimes) span[t.tensor] = {t.first, t.last};
  EXPECT_EQ(span[c.weights], std::make_pair(std::uint64_t(0), std::uint64_t(4)));
  EXPECT_EQ(span[c.first], std::make_pair(std::uint64_t(0), std::uint64_t(1)));
  EXPECT_EQ(span[c.second], std::make_pair(std::uint64_t(1), std::uint64_t(2)));
}

TEST(ProgramLiveness, AMissingProgramIsAnErrorNamingIt) {
  const Chain c = chain();
  try {
    programLiveness(c.exe, 999);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("program 999 does not exist"), std::string::npos) << e.what();
  }
}

TEST(FlopCount, MatMulCountsTwoPerMultiplyAccumulate) {
  ir::Vertex v;
  v.codelet = "MatMulPartial";
  v.params = {{"m", 32}, {"k", 784}, {"n", 128}};
  EXPECT_EQ(vertexFlops(v), 2ull * 32 * 784 * 128);
  v.codelet = "MatMulPartial<half,float>";
  EXPECT_EQ(vertexFlops(v), 2ull * 32 * 784 * 128);
}

TEST(FlopCount, ElementwiseCountsTheLargestFieldAndDataMovementNothing) {
  ir::Vertex add;
  add.codelet = "ScaledAdd";
  add.fields = {{"data", {0, 0, 100}}, {"deltas", {1, 0, 100}}};
  EXPECT_EQ(vertexFlops(add), 200u);
  ir::Vertex relu;
  relu.codelet = "Relu";
  relu.fields = {{"in", {0, 0, 50}}, {"out", {0, 50, 100}}};
  EXPECT_EQ(vertexFlops(relu), 50u);
  ir::Vertex copy;
  copy.codelet = "Copy";
  copy.fields = relu.fields;
  EXPECT_EQ(vertexFlops(copy), 0u);
  ir::ComputeSet cs;
  cs.vertices = {add, relu, copy};
  EXPECT_EQ(computeSetFlops(cs), 250u);
}

// A per-worker vertex counts as the codelet its workers run (it counted
// nothing when it came in: the profile's FLOPs lost every reduction and map).
TEST(FlopCount, APerWorkerVertexCountsAsItsWorkers) {
  ir::Vertex add;
  add.codelet = "PerWorker<ScaledAdd<half>>";
  add.fields = {{"data", {0, 0, 100}}, {"deltas", {1, 0, 100}}};
  EXPECT_EQ(vertexFlops(add), 200u);
  ir::Vertex reduce;
  reduce.codelet = "PerWorker<ReduceSum<float,half>>";
  reduce.fields = {{"in", {0, 0, 60}}, {"out", {1, 0, 20}}};
  EXPECT_EQ(vertexFlops(reduce), 60u);
}

}  // namespace
}  // namespace ipusim::profiler::test_program_liveness
