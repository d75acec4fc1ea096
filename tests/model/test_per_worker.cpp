// PerWorker<ReduceSum>: one vertex standing for the ReduceSum worker vertices
// a tile runs on its workers — their cycles, their count for code memory,
// the same numbers.
#include "test_codelet_util.hpp"
#include "model/codelets/per_worker.hpp"
#include "model/hardware/tile.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace test_per_worker {

using namespace ipusim::model;
using namespace ipusim::model::testing;

// 4 partial rows of 50 columns: six workers take 9, 9, 9, 9, 9 and 5 columns.
TEST(PerWorker, TimesItsSharesAsTheWorkerVerticesItStandsFor) {
  const Target target;
  const Codelet& perWorker = CodeletRegistry::instance().get(perWorkerName("ReduceSum"));
  const VertexShape shape = shapeOf(perWorker, {200, 50}, {{"rows", 4}, {"cols", 50}, {"axis", 0}});
  perWorker.validate(shape);
  std::vector<ipusim::ir::Cycles> shares;
  perWorker.addWorkerCycles(shape, target, shares);
  std::vector<ipusim::ir::Cycles> workers;
  for (std::uint64_t cols : {9, 9, 9, 9, 9, 5})
    workers.push_back(cyclesOf("ReduceSum", {4 * cols, cols}, {{"rows", 4}, {"cols", double(cols)}, {"axis", 0}}));
  EXPECT_EQ(shares, workers);
  EXPECT_EQ(hardware::tileComputeCycles(shares, {}, target.tile), hardware::tileComputeCycles(workers, {}, target.tile));
  EXPECT_EQ(perWorker.cycles(shape, target), workers[0]);  // the busiest share's
  EXPECT_EQ(perWorker.workerVertices(shape, target.tile), 6u);
  const VertexShape twoColumns = shapeOf(perWorker, {8, 2}, {{"rows", 4}, {"cols", 2}, {"axis", 0}});
  EXPECT_EQ(perWorker.workerVertices(twoColumns, target.tile), 2u);
}

TEST(PerWorker, ComputesWhatItsWorkerComputes) {
  std::vector<Buffer> whole{Buffer::of(pseudoRandom(60, 3)), Buffer::of(std::vector<float>(20, 0.0f))};
  std::vector<Buffer> worker = whole;
  run(perWorkerName("ReduceSum"), whole, {{"rows", 3}, {"cols", 20}, {"axis", 0}});
  run("ReduceSum", worker, {{"rows", 3}, {"cols", 20}, {"axis", 0}});
  EXPECT_EQ(whole[1].floats, worker[1].floats);
}

TEST(PerWorker, RefusesWhatItsSharesCannotDivide) {
  std::vector<Buffer> rows{Buffer::of(std::vector<float>(6, 1.0f)), Buffer::of(std::vector<float>(2, 0.0f))};
  try {
    run(perWorkerName("ReduceSum"), rows, {{"rows", 2}, {"cols", 3}, {"axis", 1}});
    FAIL() << "axis 1 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("PerWorker<ReduceSum>: param 'axis' is 1"), std::string::npos) << e.what();
  }
}

// A map of 100 floats: six workers take 17, 17, 17, 17, 16 and 16; 3
// floats (one vector of 2 and a half) go to one worker.
TEST(PerWorker, SharesAMapInRunsOfVectors) {
  const Target target;
  const Codelet& perWorker = CodeletRegistry::instance().get(perWorkerName("Add"));
  std::vector<ipusim::ir::Cycles> shares, workers;
  perWorker.addWorkerCycles(shapeOf(perWorker, {100, 100, 100}), target, shares);
  for (std::uint64_t n : {17, 17, 17, 17, 16, 16}) workers.push_back(cyclesOf("Add", {n, n, n}));
  EXPECT_EQ(shares, workers);
  EXPECT_EQ(perWorker.workerVertices(shapeOf(perWorker, {100, 100, 100}), target.tile), 6u);
  EXPECT_EQ(perWorker.workerVertices(shapeOf(perWorker, {3, 3, 3}), target.tile), 1u);
  std::vector<Buffer> uneven{Buffer::of({1, 2, 3}), Buffer::of({1, 2}), Buffer::of({0, 0, 0})};
  try {
    run(perWorkerName("Add"), uneven);
    FAIL() << "fields of different sizes accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("field 'in1' has 2 elements, expected 3"), std::string::npos) << e.what();
  }
}

}  // namespace test_per_worker
