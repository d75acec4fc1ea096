// The pieces that let ipusim run a phase on several host threads, and the
// batched codelet path: each must give exactly the sequential result.
#include "model/codelets/codelet.hpp"
#include "model/hardware/tile_memory_arena.hpp"
#include "model/hardware/worker_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <chrono>
#include <vector>

namespace ipusim::model::hardware::test_parallel_execution {
namespace {

TEST(WorkerPool, RunsEveryChunkExactlyOnceAndReturnsWhenAllAreDone) {
  for (unsigned threads : {2u, 4u}) {
    WorkerPool pool(threads);
    ASSERT_EQ(pool.size(), threads);
    for (int round = 0; round < 2000; ++round) {  // back-to-back phases, as in a simulation
      const unsigned chunks = 1 + unsigned(round % 13);
      std::vector<std::atomic<int>> calls(chunks);
      pool.run(WorkerPool::kNoKey, chunks, [&](unsigned chunk) { calls[chunk].fetch_add(1); });
      for (unsigned c = 0; c < chunks; ++c) ASSERT_EQ(calls[c].load(), 1) << "round " << round << " chunk " << c;
    }
    EXPECT_EQ(pool.sequentialRuns() + pool.parallelRuns(), 2000u);
  }
}

TEST(WorkerPool, WorkersTakeChunksWhenTheCallerIsBusy) {
  // The caller's first chunk waits until another chunk has run: only a worker
  // can have run it, so the pool's threads do take part.
  WorkerPool pool(2);
  std::atomic<int> ranElsewhere{0};
  pool.run(WorkerPool::kNoKey, 4, [&](unsigned chunk) {
    if (chunk == 0)
      while (ranElsewhere.load() == 0) std::this_thread::yield();
    else
      ranElsewhere.fetch_add(1);
  });
  EXPECT_EQ(ranElsewhere.load(), 3);
  EXPECT_GE(pool.chunksOnWorkers(), 1u);
}

TEST(WorkerPool, OneThreadRunsOnTheCaller) {
  WorkerPool pool(1);
  EXPECT_EQ(pool.size(), 1u);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<unsigned> seen;
  pool.run(WorkerPool::kNoKey, 3, [&](unsigned chunk) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    seen.push_back(chunk);
  });
  EXPECT_EQ(seen, (std::vector<unsigned>{0, 1, 2}));
}

// The adaptive choice on a clock the tests advance by hand: each keyed run
// "takes" the time the test gives the way it ran (the caller alone or the
// pool), so which way the pool chooses follows from those times alone,
// whatever the machine's load or a sanitizer's slowdown. Epochs (worker_pool.cpp):
// one untimed run then 32 timed ones, 33 runs, when every run is the same phase.
class FakeClock final : public PoolClock {
 public:
  std::chrono::nanoseconds now() const override { return now_; }
  void advance(std::chrono::nanoseconds by) { now_ += by; }

 private:
  std::chrono::nanoseconds now_{0};
};

using std::chrono::microseconds;

// How each run went: 'S' on the caller alone, 'P' on the pool.
struct TimedRuns {
  FakeClock clock;  // before the pool, which holds it
  WorkerPool pool;
  std::string ways;
  explicit TimedRuns(WorkerChoice choice = WorkerChoice::Adaptive) : pool(2, choice, clock) {}
  // One run of phase `key` that takes `alone` on the caller alone and
  // `pooled` on the pool; returns whether it took the pool.
  bool run(std::uint64_t key, microseconds alone, microseconds pooled) {
    const std::uint64_t before = pool.parallelRuns();
    std::atomic<unsigned> ran{0};
    pool.run(key, 8, [&](unsigned) { ran.fetch_add(1); });
    EXPECT_EQ(ran.load(), 8u);
    const bool onPool = pool.parallelRuns() != before;
    clock.advance(onPool ? pooled : alone);
    ways += onPool ? 'P' : 'S';
    return onPool;
  }
};

// `n` runs of `way`.
std::string runs(std::size_t n, char way) { return std::string(n, way); }

TEST(WorkerPool, AdaptiveChoiceTriesBothWaysThenKeepsTheFasterOne) {
  // The pool takes 1.2 ms a run, the caller alone 1 ms: the first epoch on
  // the caller, a trial epoch on the pool, one more on the caller, and the
  // caller is kept; the pool is tried again after 4 epochs, then after 8
  // (the wait doubles while trials confirm the choice).
  TimedRuns t;
  for (int i = 0; i < 600; ++i) t.run(7, microseconds(1000), microseconds(1200));
  EXPECT_EQ(t.ways, runs(33, 'S') + runs(33, 'P') + runs(33, 'S') + runs(4 * 33, 'S') + runs(33, 'P') +
                        runs(33, 'S') + runs(8 * 33, 'S') + runs(33, 'P') + runs(6, 'S'));
  EXPECT_EQ(t.pool.parallelRuns(), 99u);
  EXPECT_EQ(t.pool.sequentialRuns(), 501u);
}

TEST(WorkerPool, ATrialLostByFarEndsAfterItsFirstTimedCycle) {
  // The caller alone takes 0.8 ms a run, the pool 3 ms (a worker "without a
  // core", as under a CPU hog): more than 1.5 times the kept way's time, so
  // each trial ends after its untimed and its first timed run, not after a
  // whole epoch of 33.
  TimedRuns t;
  for (int i = 0; i < 600; ++i) t.run(7, microseconds(800), microseconds(3000));
  EXPECT_EQ(t.ways, runs(33, 'S') + runs(2, 'P') + runs(33, 'S') + runs(4 * 33, 'S') + runs(2, 'P') + runs(33, 'S') +
                        runs(8 * 33, 'S') + runs(2, 'P') + runs(99, 'S'));
  EXPECT_EQ(t.pool.parallelRuns(), 6u);
}

TEST(WorkerPool, AdaptiveChoiceKeepsThePoolWhenItIsFaster) {
  // The pool takes half the caller's time: chosen after its trial, and a
  // trial of the caller alone (twice the pool's time: lost by far) ends
  // after two runs.
  TimedRuns t;
  for (int i = 0; i < 300; ++i) t.run(3, microseconds(8000), microseconds(4000));
  EXPECT_EQ(t.ways, runs(33, 'S') + runs(33, 'P') + runs(33, 'S') + runs(4 * 33, 'P') + runs(2, 'S') + runs(33, 'P') +
                        runs(34, 'P'));
  EXPECT_EQ(t.pool.parallelRuns(), 232u);
}

TEST(WorkerPool, AdaptiveChoiceComparesTheSamePhasesWhenAStepHasMany) {
  // 20 phases a step, each run once a step (a large model), the pool twice
  // as fast: an epoch is whole steps (1 untimed + 2 timed: 40 timed runs, the
  // first boundary after 32), so both ways time the same phases, and the
  // pool is chosen after its trial. (Epochs of a fixed number of runs cut
  // the steps in different places: the two ways then shared no phase.)
  TimedRuns t;
  for (int step = 0; step < 18; ++step)
    for (std::uint64_t phase = 0; phase < 20; ++phase) t.run(phase, microseconds(2000), microseconds(1000));
  EXPECT_EQ(t.ways, runs(3 * 20, 'S') + runs(3 * 20, 'P') + runs(3 * 20, 'S') + runs(9 * 20, 'P'));
}

TEST(WorkerPool, AdaptiveChoiceCountsTheWorkBetweenRuns) {
  // A phase the pool runs in half the time (1 ms against 2), after which the
  // caller's own work (unkeyed: host work, small phases) takes 1.5 ms more,
  // as reading data that the other core wrote: per step the pool loses (2.5
  // ms against 2). The pool times whole steps, so the caller alone is kept.
  TimedRuns t;
  for (int step = 0; step < 300; ++step)
    if (t.run(5, microseconds(2000), microseconds(1000))) t.clock.advance(microseconds(1500));
  EXPECT_EQ(t.ways, runs(33, 'S') + runs(33, 'P') + runs(33, 'S') + runs(4 * 33, 'S') + runs(33, 'P') + runs(36, 'S'));
}

TEST(WorkerPool, ATrialMustBeatTheEpochsOnBothSidesOfIt) {
  // The caller alone takes 1 ms a run, the pool 1.4 ms; but the epoch just
  // before the first trial is slow (3 ms a run, as when the scheduler gave
  // the caller's core to another process). The trial beats that epoch, not
  // the one after it: the caller alone is kept, the pool running only its
  // trials.
  TimedRuns t;
  for (int i = 0; i < 300; ++i)
    t.run(9, microseconds(t.pool.parallelRuns() == 0 ? 3000 : 1000), microseconds(1400));
  EXPECT_EQ(t.ways, runs(33, 'S') + runs(33, 'P') + runs(33, 'S') + runs(4 * 33, 'S') + runs(33, 'P') + runs(36, 'S'));
}

TEST(WorkerPool, ThePoolMustSaveMoreThanItsMarginToBeChosen) {
  // The caller alone takes 10 ms a run. A pool 3 % faster (9.7 ms) saves less
  // than the 5 % margin: the caller alone is kept. A pool 6 % faster (9.4 ms)
  // is chosen.
  TimedRuns within;
  for (int i = 0; i < 140; ++i) within.run(4, microseconds(10000), microseconds(9700));
  EXPECT_EQ(within.ways, runs(33, 'S') + runs(33, 'P') + runs(33, 'S') + runs(41, 'S'));
  TimedRuns beyond;
  for (int i = 0; i < 140; ++i) beyond.run(4, microseconds(10000), microseconds(9400));
  EXPECT_EQ(beyond.ways, runs(33, 'S') + runs(33, 'P') + runs(33, 'S') + runs(41, 'P'));
}

TEST(WorkerPool, TheSteadyPoolClockReadsTheSteadyClockInNanoseconds) {
  // What the pool reads unless a test gives it another clock.
  const auto before = std::chrono::steady_clock::now().time_since_epoch();
  const auto read = steadyPoolClock().now();
  const auto after = std::chrono::steady_clock::now().time_since_epoch();
  EXPECT_LE(before, read);
  EXPECT_LE(read, after);
}

TEST(WorkerPool, OneThreadRunsTheWholeWorkInsteadOfItsChunks) {
  // With a whole() form, the one-thread way runs it, not the chunks one by
  // one; the pool's way runs the chunks.
  int whole = 0;
  std::atomic<int> chunks{0};
  WorkerPool alone(1);
  alone.run(3, 8, [&](unsigned) { ++chunks; }, [&] { ++whole; });
  EXPECT_EQ(whole, 1);
  EXPECT_EQ(chunks.load(), 0);
  WorkerPool pool(2, WorkerChoice::Always);
  pool.run(3, 8, [&](unsigned) { ++chunks; }, [&] { ++whole; });
  EXPECT_EQ(whole, 1);
  EXPECT_EQ(chunks.load(), 8);
}

TEST(WorkerPool, TheCallerTakesTheFirstChunksAndTheWorkersTheLast) {
  // Each thread works from its own end of the job, so a phase's low chunks
  // (low tiles) stay with the caller phase after phase and the high ones with
  // the worker. The caller's first chunk waits until the worker has run one.
  WorkerPool pool(2, WorkerChoice::Always);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> ranOnWorker{0};
  std::vector<unsigned> callerChunks, workerChunks;
  pool.run(WorkerPool::kNoKey, 6, [&](unsigned chunk) {
    if (std::this_thread::get_id() == caller) {
      if (callerChunks.empty())
        while (ranOnWorker.load() == 0) std::this_thread::yield();
      callerChunks.push_back(chunk);
    } else {
      workerChunks.push_back(chunk);  // one worker: no other thread writes it
      ranOnWorker.fetch_add(1);
    }
  });
  ASSERT_FALSE(workerChunks.empty());
  EXPECT_EQ(workerChunks.front(), 5u);
  EXPECT_TRUE(std::is_sorted(workerChunks.rbegin(), workerChunks.rend()));
  EXPECT_TRUE(std::is_sorted(callerChunks.begin(), callerChunks.end()));
  if (!callerChunks.empty()) {
    EXPECT_EQ(callerChunks.front(), 0u);
    EXPECT_LT(callerChunks.back(), workerChunks.back());  // they met in between
  }
  EXPECT_EQ(callerChunks.size() + workerChunks.size(), 6u);
}

TEST(WorkerPool, TooManyChunksIsAClearError) {
  WorkerPool pool(2);
  try {
    pool.run(WorkerPool::kNoKey, WorkerPool::kMaxChunks + 1, [](unsigned) {});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("65536 chunks, expected at most 65535"), std::string::npos) << e.what();
  }
}

TEST(WorkerPool, RethrowsTheErrorOfTheLowestFailingChunk) {
  for (WorkerChoice choice : {WorkerChoice::Adaptive, WorkerChoice::Always}) {
    WorkerPool pool(2, choice);
    for (int round = 0; round < 20; ++round) {
      try {
        pool.run(1, 6, [](unsigned chunk) { throw std::invalid_argument("chunk " + std::to_string(chunk)); });
        FAIL() << "expected an exception";
      } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "chunk 0");  // what a sequential run meets first
      }
      try {
        pool.run(2, 6, [](unsigned chunk) {
          if (chunk >= 3) throw std::invalid_argument("chunk " + std::to_string(chunk));
        });
        FAIL() << "expected an exception";
      } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "chunk 3");
      }
    }
    std::atomic<int> ran{0};  // the pool still works after an error
    pool.run(3, 5, [&](unsigned) { ran.fetch_add(1); });
    EXPECT_EQ(ran.load(), 5);
  }
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
  const unsigned automatic = defaultWorkerThreads();
  EXPECT_GE(automatic, 1u);
  EXPECT_LE(automatic, 2u);
}

TEST(WorkerPool, TheDefaultTakesASecondThreadWhenTwoCpusAreAllowed) {
  EXPECT_EQ(workerThreadsFor(1), 1u);
  EXPECT_EQ(workerThreadsFor(2), 2u);
  EXPECT_EQ(workerThreadsFor(8), 2u);
}

TEST(WorkerPool, EnvironmentVariableChoosesTheChoiceAndIsChecked) {
  unsetenv("IPUSIM_WORKER_CHOICE");
  EXPECT_EQ(defaultWorkerChoice(), WorkerChoice::Adaptive);
  setenv("IPUSIM_WORKER_CHOICE", "always", 1);
  EXPECT_EQ(defaultWorkerChoice(), WorkerChoice::Always);
  setenv("IPUSIM_WORKER_CHOICE", "sometimes", 1);
  try {
    defaultWorkerChoice();
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("IPUSIM_WORKER_CHOICE is 'sometimes'"), std::string::npos) << e.what();
  }
  unsetenv("IPUSIM_WORKER_CHOICE");
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
}  // namespace ipusim::model::hardware::test_parallel_execution
