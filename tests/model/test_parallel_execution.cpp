// The pieces that let ipusim run a phase on several host threads, and the
// batched codelet path: each must give exactly the sequential result.
#include "model/codelets/codelet.hpp"
#include "model/hardware/tile_memory_arena.hpp"
#include "model/hardware/worker_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace ipusim::model::hardware {
namespace {

TEST(WorkerPool, RunsEveryPartExactlyOnceAndReturnsWhenAllAreDone) {
  WorkerPool pool(2);
  ASSERT_EQ(pool.size(), 2u);
  for (int round = 0; round < 1000; ++round) {  // back-to-back phases, as in a simulation
    std::vector<std::atomic<int>> calls(pool.size());
    pool.run([&](unsigned part) { calls[part].fetch_add(1); });
    for (auto& c : calls) ASSERT_EQ(c.load(), 1) << "round " << round;
  }
}

TEST(WorkerPool, OneThreadRunsOnTheCaller) {
  WorkerPool pool(1);
  EXPECT_EQ(pool.size(), 1u);
  unsigned seen = 99;
  pool.run([&](unsigned part) { seen = part; });
  EXPECT_EQ(seen, 0u);
}

TEST(WorkerPool, RethrowsTheErrorOfTheLowestFailingPart) {
  WorkerPool pool(2);
  try {
    pool.run([](unsigned part) { throw std::invalid_argument("part " + std::to_string(part)); });
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "part 0");  // what a sequential run meets first
  }
  try {
    pool.run([](unsigned part) {
      if (part == 1) throw std::invalid_argument("part 1");
    });
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "part 1");
  }
  int ran = 0;  // the pool still works after an error
  pool.run([&](unsigned part) {
    if (part == 0) ran = 1;
  });
  EXPECT_EQ(ran, 1);
}

TEST(WorkerPool, ZeroThreadsIsAClearError) {
  EXPECT_THROW(WorkerPool pool(0), std::invalid_argument);
}

TEST(WorkerPool, EnvironmentVariableChoosesTheThreadCountAndIsChecked) {
  setenv("IPUSIM_WORKER_THREADS", "1", 1);
  EXPECT_EQ(defaultWorkerThreads(), 1u);
  setenv("IPUSIM_WORKER_THREADS", "3", 1);
  EXPECT_EQ(defaultWorkerThreads(), 3u);
  setenv("IPUSIM_WORKER_THREADS", "two", 1);
  try {
    defaultWorkerThreads();
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("IPUSIM_WORKER_THREADS is 'two'"), std::string::npos) << e.what();
  }
  setenv("IPUSIM_WORKER_THREADS", "0", 1);
  EXPECT_THROW(defaultWorkerThreads(), std::invalid_argument);
  unsetenv("IPUSIM_WORKER_THREADS");
}

TEST(TileMemoryArena, BlocksAreZeroedAlignedAndDisjoint) {
  const std::vector<std::uint64_t> bytes = {100, 0, 4096, 1, 624 * 1024};
  TileMemoryArena arena(bytes);
  EXPECT_EQ(arena.block(1), nullptr);
  std::vector<std::uint8_t*> blocks;
  for (std::uint32_t t = 0; t < bytes.size(); ++t) {
    if (!bytes[t]) continue;
    std::uint8_t* b = arena.block(t);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 64, 0u) << "tile " << t;
    for (std::uint64_t i = 0; i < bytes[t]; ++i) ASSERT_EQ(b[i], 0) << "tile " << t << " byte " << i;
    std::memset(b, int(t + 1), bytes[t]);
    blocks.push_back(b);
  }
  // Writing every block did not touch any other block.
  for (std::uint32_t t = 0; t < bytes.size(); ++t)
    for (std::uint64_t i = 0; i < bytes[t]; ++i) ASSERT_EQ(arena.block(t)[i], t + 1) << "tile " << t;
}

TEST(TileMemoryArena, NoBytesMeansNoBlocks) {
  TileMemoryArena arena({0, 0});
  EXPECT_EQ(arena.block(0), nullptr);
  EXPECT_EQ(arena.block(1), nullptr);
}

TEST(CodeletBatch, MatMulPartialBatchEqualsComputePerVertexOnEveryPath) {
  // MatMulPartial, all shapes that take different paths (k == 1, transposes,
  // accumulate), batched against one compute() call per vertex.
  const Codelet& mm = CodeletRegistry::instance().get("MatMulPartial");
  struct Shape { double m, k, n, ta, tb, acc; };
  const std::vector<Shape> shapes = {{1, 1, 32, 1, 0, 0}, {2, 1, 5, 0, 1, 1}, {3, 7, 9, 0, 0, 0},
                                     {4, 5, 3, 1, 1, 1}, {1, 49, 128, 0, 0, 0}, {2, 1, 8, 1, 1, 0}};
  std::vector<std::vector<float>> a, b, outOne, outBatch;
  std::vector<FieldData> fields;
  std::vector<double> params;
  std::uint32_t seed = 7;
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;
    return float(int(seed >> 16) % 2001 - 1000) / 250.0f;  // includes exact zeros and negatives
  };
  for (const Shape& s : shapes) {
    const auto m = std::size_t(s.m), k = std::size_t(s.k), n = std::size_t(s.n);
    a.emplace_back(m * k);
    b.emplace_back(k * n);
    outOne.emplace_back(m * n);
    for (float& v : a.back()) v = next();
    for (float& v : b.back()) v = next();
    for (float& v : outOne.back()) v = next();
    outBatch.push_back(outOne.back());
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    const std::vector<double> p = {s.m, s.k, s.n, s.ta, s.tb, s.acc};
    mm.compute({{a[i].data(), a[i].size()}, {b[i].data(), b[i].size()}, {outOne[i].data(), outOne[i].size()}}, p);
    fields.insert(fields.end(), {{a[i].data(), a[i].size()}, {b[i].data(), b[i].size()},
                                 {outBatch[i].data(), outBatch[i].size()}});
    params.insert(params.end(), p.begin(), p.end());
  }
  mm.computeBatch(fields.data(), 3, params.data(), 6, shapes.size());
  for (std::size_t i = 0; i < shapes.size(); ++i)
    ASSERT_EQ(0, std::memcmp(outOne[i].data(), outBatch[i].data(), outOne[i].size() * sizeof(float)))
        << "shape " << i;
}

TEST(CodeletBatch, KOneProductOfZeroAndANegativeIsPositiveZeroAsInTheGeneralKernel) {
  // The k == 1 fast path must keep 0 + (-0) = +0 (the general kernel zeroes
  // out, then adds), or weights could differ in the sign of a zero.
  const Codelet& mm = CodeletRegistry::instance().get("MatMulPartial");
  float a = 0.0f, b = -3.0f, out = 1.0f;
  mm.compute({{&a, 1}, {&b, 1}, {&out, 1}}, {1, 1, 1, 0, 0, 0});
  EXPECT_EQ(out, 0.0f);
  EXPECT_FALSE(std::signbit(out));
}

}  // namespace
}  // namespace ipusim::model::hardware
