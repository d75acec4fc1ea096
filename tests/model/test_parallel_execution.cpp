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

namespace ipusim::model::hardware {
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

TEST(WorkerPool, AdaptiveChoiceTriesBothWaysThenKeepsTheFasterOne) {
  // A phase whose chunks only cost when they run on a worker (a worker
  // "without a core"): the pool must settle on the caller alone, trying the
  // pool again only once in a while (an epoch at a time, ever more rarely).
  WorkerPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  auto task = [&](unsigned) {
    if (std::this_thread::get_id() != caller) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  for (int i = 0; i < 600; ++i) pool.run(7, 8, task);
  EXPECT_GE(pool.sequentialRuns(), 480u) << "parallel runs: " << pool.parallelRuns();
  EXPECT_GE(pool.parallelRuns(), 2u);  // the trials happen
}

TEST(WorkerPool, ATrialLostByFarEndsAfterItsFirstTimedCycle) {
  // The caller alone runs the work in 0.8 ms; on the pool the worker's chunk
  // takes 3 ms (a worker "without a core", as under a CPU hog), so a pooled
  // run takes about 3 ms. Each trial ends after its untimed and its first
  // timed run instead of a whole epoch of 33: three or four trials in 600
  // runs (a whole epoch each: at least 99 runs on the pool).
  WorkerPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  auto task = [&](unsigned) {
    const bool onCaller = std::this_thread::get_id() == caller;
    std::this_thread::sleep_for(std::chrono::microseconds(onCaller ? 100 : 3000));
  };
  auto whole = [] { std::this_thread::sleep_for(std::chrono::microseconds(800)); };
  for (int i = 0; i < 600; ++i) pool.run(7, 8, task, whole);
  EXPECT_LE(pool.parallelRuns(), 16u) << "sequential runs: " << pool.sequentialRuns();
  EXPECT_GE(pool.parallelRuns(), 2u);
  EXPECT_GE(pool.chunksOnWorkers(), 1u);  // the worker did take chunks: its trials were slow
}

TEST(WorkerPool, AdaptiveChoiceKeepsThePoolWhenItIsFaster) {
  // Chunks that take the same time on any thread (they wait, as a chunk
  // waiting for memory would): two threads finish a run in half the time.
  // (1 ms each: a worker's wake-up or a preemption under a sanitizer on a
  // busy machine stays far below the 4 ms the pool saves per run.)
  // Epochs of 33 runs: on the caller, on the pool (the trial), on the caller
  // again (then the choice), then the pool.
  WorkerPool pool(2);
  auto task = [](unsigned) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
  for (int i = 0; i < 300; ++i) pool.run(3, 8, task);
  EXPECT_GE(pool.parallelRuns(), 190u) << "sequential runs: " << pool.sequentialRuns();
}

TEST(WorkerPool, AdaptiveChoiceComparesTheSamePhasesWhenAStepHasMany) {
  // Many phases a step, each run once a step (a large model): an epoch is whole
  // steps, so both ways time the same phases and the pool, faster, is chosen.
  // (Epochs of a fixed number of runs cut the steps in different places: the
  // two ways then shared no phase and the choice stayed on one thread.)
  // 20 phases a step: an epoch is 1 untimed + 2 timed steps; the pool runs
  // the second epoch (the trial) and every epoch after the third.
  WorkerPool pool(2);
  auto task = [](unsigned) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
  for (int step = 0; step < 18; ++step)
    for (std::uint64_t phase = 0; phase < 20; ++phase) pool.run(phase, 8, task);
  EXPECT_GE(pool.parallelRuns(), 220u) << "sequential runs: " << pool.sequentialRuns();
}

TEST(WorkerPool, AdaptiveChoiceCountsTheWorkBetweenRuns) {
  // A phase the pool runs in half the time, after which the caller's own work
  // (unkeyed: host work, small phases) is slower, as reading data that the
  // other core wrote: per keyed run the pool wins (1 ms against 2), per step
  // it loses (1 + 3 ms against 2). The caller alone must be kept.
  WorkerPool pool(2);
  auto task = [](unsigned) { std::this_thread::sleep_for(std::chrono::microseconds(250)); };
  for (int step = 0; step < 400; ++step) {
    const std::uint64_t before = pool.parallelRuns();
    pool.run(5, 8, task);
    if (pool.parallelRuns() != before) std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  EXPECT_GE(pool.sequentialRuns(), 300u) << "parallel runs: " << pool.parallelRuns();
}

TEST(WorkerPool, ATrialMustBeatTheEpochsOnBothSidesOfIt) {
  // The caller alone takes 1 ms a run, the pool 1.5 ms; but the epoch just
  // before the first trial is slow (3 ms a run, as when the scheduler gave
  // the caller's core to another process). The trial beats that epoch, not
  // the one after it: the caller alone must be kept, the pool running only
  // its trials (an epoch of 33 runs each: at most two in 300 runs).
  WorkerPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  auto task = [&](unsigned) {
    const bool onCaller = std::this_thread::get_id() == caller;
    std::this_thread::sleep_for(std::chrono::microseconds(onCaller ? 500 : 1500));
  };
  for (int i = 0; i < 300; ++i) {
    if (pool.parallelRuns() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    pool.run(9, 2, task);
  }
  EXPECT_LE(pool.parallelRuns(), 70u) << "sequential runs: " << pool.sequentialRuns();
}

TEST(WorkerPool, ThePoolMustSaveMoreThanItsMarginToBeChosen) {
  // The caller alone runs the whole work in 10 ms; on the pool the worker's
  // chunk takes 9.7 ms (the caller's 5), so a run takes about 3 % less time
  // there: less than the margin, so the caller alone is kept, the pool
  // running only its trial. One sleep a run either way: the caller alone
  // sleeping twice (its two chunks) paid two sleeps' overshoot against the
  // pool's one, and on a loaded machine (ctest -j2) that made the pool look
  // more than 5 % faster.
  WorkerPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  auto task = [&](unsigned) {
    const bool onCaller = std::this_thread::get_id() == caller;
    std::this_thread::sleep_for(std::chrono::microseconds(onCaller ? 5000 : 9700));
  };
  auto whole = [] { std::this_thread::sleep_for(std::chrono::microseconds(10000)); };
  for (int i = 0; i < 140; ++i) pool.run(4, 2, task, whole);
  EXPECT_LE(pool.parallelRuns(), 40u) << "sequential runs: " << pool.sequentialRuns();
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
}  // namespace ipusim::model::hardware
