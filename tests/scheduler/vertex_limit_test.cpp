// The step's laid-out vertices held to their bound as it is lowered
// (lowerStep's maxVertices, kMaxLaidOutVertices in workload_limits.hpp).
#include "scheduler/compiler.hpp"
#include "scheduler/graph/training_graph.hpp"
#include "scheduler/lowering/lowering.hpp"

#include <gtest/gtest.h>

namespace ipusim::scheduler::vertex_limit_test {
namespace {

// Found by the fourth adversarial pass of issue 33: a 2-layer LSTM(256)
// unrolled over 256 steps at batch 32 lays out 31 M vertices on a Mk2, and
// the compile passed 8 GB before any check (the bound held only cloned
// replicas and pipeline stages). Here the tutorial's MLP under a bound of
// 1,000 vertices: refused at the op that passes it, naming its layer.
TEST(VertexLimit, TheStepStopsAtTheBoundNamingTheLayer) {
  const Workload w = loadWorkload(std::string(IPUSIM_SOURCE_DIR) + "/workloads/mnist_with_feeds.json");
  const model::Target target = targetFor(w);
  auto lower = [&](std::uint64_t maxVertices) {
    OpGraph graph = buildTrainingGraph(w);
    const Schedule schedule = scheduleOps(graph, w.scheduling);
    return lowerStep(graph, schedule, target, target.totalTiles(), target.tile.memoryBytes / 2, {}, maxVertices);
  };
  std::uint64_t vertices = 0;
  for (const ir::ComputeSet& cs : lower(kMaxLaidOutVertices).exe.computeSets) vertices += cs.vertices.size();
  ASSERT_GT(vertices, 1000u);
  try {
    lower(1000);
    FAIL() << "a step of " << vertices << " vertices was lowered under a bound of 1000";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("layer '", 0), 0u) << m;
    EXPECT_NE(m.find("': the step lays out more than 1000 vertices by its op '"), std::string::npos) << m;
    EXPECT_NE(m.find("use fewer steps, a smaller batch or smaller layers"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(lower(vertices));  // exactly at the bound: lowered
}

}  // namespace
}  // namespace ipusim::scheduler::vertex_limit_test
