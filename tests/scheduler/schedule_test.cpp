// Scheduling algorithms: valid topological orders; choose_best has the lowest peak liveness.
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/graph/schedule.hpp"

#include <gtest/gtest.h>

namespace ipusim::scheduler::schedule_test {
namespace {

Workload tutorial() { return loadWorkload(std::string(IPUSIM_SOURCE_DIR) + "/workloads/mnist_with_feeds.json"); }

TEST(OpGraph, TutorialHasForwardBackwardAndUpdates) {
  const OpGraph g = buildTrainingGraph(tutorial());
  int matmuls = 0, updates = 0;
  for (const Op& op : g.ops) matmuls += op.kind == OpKind::MatMul, updates += op.kind == OpKind::SgdUpdate;
  EXPECT_EQ(matmuls, 5);  // 2 forward, 2 kernel gradients, 1 input gradient (the images need none)
  EXPECT_EQ(updates, 4);  // 2 kernels, 2 biases
  EXPECT_EQ(g.values[g.weights[0]].shape, (std::vector<std::uint64_t>{784, 128}));
  // Glorot uniform limit for 784 x 128
  const double limit = std::sqrt(6.0 / (784 + 128));
  ASSERT_TRUE(g.values[g.weights[0]].drawnInit.has_value());
  EXPECT_DOUBLE_EQ(g.values[g.weights[0]].drawnInit->limit, limit);
  const std::vector<double> drawn = ir::drawnValues(*g.values[g.weights[0]].drawnInit, 784 * 128);
  double lowest = 0, highest = 0;
  for (double v : drawn) {
    ASSERT_LE(std::fabs(v), limit);
    lowest = std::min(lowest, v), highest = std::max(highest, v);
  }
  EXPECT_LT(lowest, -0.99 * limit);  // the whole range is used
  EXPECT_GT(highest, 0.99 * limit);
  EXPECT_FALSE(g.values[g.weights[1]].drawnInit.has_value());  // biases start at zero
  // Each kernel has its own draw.
  EXPECT_NE(g.values[g.weights[0]].drawnInit->seed, g.values[g.weights[2]].drawnInit->seed);
}

TEST(Schedule, EveryAlgorithmGivesAValidOrder) {
  const OpGraph g = buildTrainingGraph(tutorial());
  for (const std::string& name : schedulingAlgorithms()) {
    const Schedule s = scheduleOps(g, name);
    EXPECT_NO_THROW(g.checkTopological(s.order)) << name;
    EXPECT_GT(s.peakLivenessBytes, 0u) << name;
  }
}

TEST(Schedule, UpdatesComeAfterEveryReaderOfTheWeight) {
  const OpGraph g = buildTrainingGraph(tutorial());
  for (const std::string& name : schedulingAlgorithms()) {
    const Schedule s = scheduleOps(g, name);
    std::vector<std::size_t> pos(g.ops.size());
    for (std::size_t i = 0; i < s.order.size(); ++i) pos[s.order[i]] = i;
    for (std::size_t u = 0; u < g.ops.size(); ++u) {
      if (g.ops[u].kind != OpKind::SgdUpdate) continue;
      for (std::size_t r = 0; r < g.ops.size(); ++r) {
        if (r != u && std::count(g.ops[r].inputs.begin(), g.ops[r].inputs.end(), g.ops[u].inputs[0])) {
          EXPECT_LT(pos[r], pos[u]) << name << ": " << g.ops[r].name << " after " << g.ops[u].name;
        }
      }
    }
  }
}

TEST(Schedule, ChooseBestNeverHasHigherPeakLiveness) {
  for (const char* file : {"mnist_with_feeds.json", "small_synthetic.json"}) {
    const OpGraph g = buildTrainingGraph(loadWorkload(std::string(IPUSIM_SOURCE_DIR) + "/workloads/" + file));
    const Schedule best = scheduleOps(g, "choose_best");
    for (const std::string& name : schedulingAlgorithms())
      EXPECT_LE(best.peakLivenessBytes, scheduleOps(g, name).peakLivenessBytes) << file << " " << name;
  }
}

TEST(Schedule, PeakLivenessOfAChain) {
  // images -> dense(4) -> loss on a 2 x 3 batch: count by hand on post_order.
  Workload w = parseWorkload(nlohmann::json::parse(R"({"dataset": {"format": "synthetic", "batch_size": 2, "features": 3, "classes": 4},
     "model": {"layers": [{"type": "dense", "units": 4}]},
     "loss": {"type": "sparse_categorical_crossentropy", "from_logits": true}})"), "w.json");
  const OpGraph g = buildTrainingGraph(w);
  const Schedule s = scheduleOps(g, "post_order");
  EXPECT_EQ(s.peakLivenessBytes, peakLivenessBytes(g, s.order));
  EXPECT_THROW(scheduleOps(g, "random"), std::invalid_argument);
}

}  // namespace
}  // namespace ipusim::scheduler::schedule_test
