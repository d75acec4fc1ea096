#include "model/hardware/worker_pool.hpp"

#include <sched.h>
#include <stdlib.h>  // getloadavg

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ipusim::model::hardware {
namespace {

using Clock = std::chrono::steady_clock;

// Spin limits (estimates, not fits): a futex wake-up and the scheduler's
// latency cost some 5-50 us, so a worker keeps watching for the next phase
// for about that long; the caller waits at most about one chunk's time for
// chunks still running on a worker before it sleeps.
constexpr auto kWorkerSpin = std::chrono::microseconds(20);
constexpr auto kCallerSpin = std::chrono::microseconds(50);
// Runs a phase is timed each way before the choice uses the timings, and how
// often the slower way is tried again (estimates): the interval starts at
// kExploreFirst runs and doubles, up to kExploreLast, each time the trial
// confirms the choice (a parallel run on a loaded machine can cost a scheduler
// time slice: trials must be rare once the answer is clear); it starts over
// when the trial changes the choice.
constexpr std::uint32_t kWarmUpSamples = 2;
constexpr std::uint32_t kExploreFirst = 16;  // also PhaseTiming::trialEvery's start
constexpr std::uint32_t kExploreLast = 1024;
// Smoothing weight of a new sample; a sample above twice the current estimate
// (the thread was preempted) counts as twice the estimate.
constexpr double kSmoothing = 0.25;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or `limit` passed; returns done().
template <class Done>
bool spinUntil(Done&& done, Clock::duration limit) {
  const Clock::time_point end = Clock::now() + limit;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpuRelax();
    }
    if (Clock::now() >= end) return done();
  }
}

void smooth(double& estimate, std::uint32_t& samples, double sample) {
  if (samples == 0)
    estimate = sample;
  else
    estimate += kSmoothing * (std::min(sample, 2 * estimate) - estimate);
  ++samples;
}

}  // namespace

WorkerPool::WorkerPool(unsigned threads, WorkerChoice choice) : choice_(choice) {
  if (threads == 0) throw std::invalid_argument("WorkerPool: threads is 0, expected at least 1");
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { workerLoop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool WorkerPool::chooseParallel(PhaseTiming& t) const {
  t.trial = false;
  if (t.parallelSamples < kWarmUpSamples) return true;
  if (t.sequentialSamples < kWarmUpSamples) return false;
  const bool parallelFaster = t.parallelNs < t.sequentialNs;
  if (++t.runsSinceOther >= t.trialEvery) {
    t.runsSinceOther = 0;
    t.trial = true;
    return !parallelFaster;
  }
  return parallelFaster;
}

void WorkerPool::record(PhaseTiming& t, bool parallel, double ns) {
  const bool parallelWasFaster = t.parallelNs < t.sequentialNs;
  if (parallel)
    smooth(t.parallelNs, t.parallelSamples, ns);
  else
    smooth(t.sequentialNs, t.sequentialSamples, ns);
  if (!t.trial) return;
  if ((t.parallelNs < t.sequentialNs) == parallelWasFaster)
    t.trialEvery = std::min(2 * t.trialEvery, kExploreLast);
  else
    t.trialEvery = kExploreFirst;
}

void WorkerPool::run(std::uint64_t key, unsigned chunks, const std::function<void(unsigned)>& task) {
  if (chunks == 0) return;
  if (workers_.empty() || chunks == 1) {
    runSequential(chunks, task);
    return;
  }
  if (key == kNoKey || choice_ == WorkerChoice::Always) {
    runParallel(chunks, task);
    return;
  }
  PhaseTiming& timing = timings_[key];
  const bool parallel = chooseParallel(timing);
  const Clock::time_point start = Clock::now();
  if (parallel)
    runParallel(chunks, task);
  else
    runSequential(chunks, task);
  const double ns = double(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
  record(timing, parallel, ns);
}

void WorkerPool::runSequential(unsigned chunks, const std::function<void(unsigned)>& task) {
  ++sequentialRuns_;
  for (unsigned c = 0; c < chunks; ++c) task(c);
}

void WorkerPool::runParallel(unsigned chunks, const std::function<void(unsigned)>& task) {
  ++parallelRuns_;
  errors_.assign(chunks, nullptr);
  failed_.store(false, std::memory_order_relaxed);
  finished_.store(0, std::memory_order_relaxed);
  task_ = &task;
  const std::uint32_t generation = generationOf(state_.load(std::memory_order_relaxed)) + 1;
  chunksOf(generation).store(chunks, std::memory_order_relaxed);
  // Publishes the job. seq_cst with the sleepers_ load below (and the
  // worker's sleepers_ increment and state_ load): either this thread sees a
  // sleeper or the sleeper sees the job.
  state_.store(std::uint64_t(generation) << 32, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }  // a worker between its check and its wait sees the job
    wake_.notify_all();
  }
  runChunks(generation, false);
  auto allDone = [&] { return finished_.load(std::memory_order_seq_cst) == chunks; };
  if (!spinUntil(allDone, kCallerSpin)) {
    std::unique_lock<std::mutex> lock(mutex_);
    callerSleeping_.store(true, std::memory_order_seq_cst);
    done_.wait(lock, allDone);
    callerSleeping_.store(false, std::memory_order_relaxed);
  }
  task_ = nullptr;
  if (failed_.load(std::memory_order_relaxed))
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
}

unsigned WorkerPool::runChunks(std::uint32_t generation, bool onWorker) {
  unsigned ran = 0;
  std::uint64_t state = state_.load(std::memory_order_acquire);
  for (;;) {
    if (generationOf(state) != generation) break;
    const unsigned chunk = nextChunkOf(state);
    if (chunk >= chunksOf(generation).load(std::memory_order_relaxed)) break;
    // A successful claim proves the job is still current: it cannot finish
    // before this chunk does, so task_ and its chunk count stay valid until then.
    if (!state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire))
      continue;
    try {
      (*task_)(chunk);
    } catch (...) {
      errors_[chunk] = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
    ++ran;
    // Counted before the chunk is reported finished: once the caller has seen
    // every chunk finished, chunksOnWorkers() includes them all.
    if (onWorker) chunksOnWorkers_.fetch_add(1, std::memory_order_relaxed);
    const unsigned total = chunksOf(generation).load(std::memory_order_relaxed);
    if (finished_.fetch_add(1, std::memory_order_seq_cst) + 1 == total && onWorker &&
        callerSleeping_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
    state = state_.load(std::memory_order_acquire);
  }
  return ran;
}

void WorkerPool::workerLoop() {
  std::uint32_t seen = 0;
  auto newJob = [&] {
    return stopping_.load(std::memory_order_seq_cst) || generationOf(state_.load(std::memory_order_seq_cst)) != seen;
  };
  for (;;) {
    if (!spinUntil(newJob, kWorkerSpin)) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock, newJob);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stopping_.load(std::memory_order_acquire)) return;
    seen = generationOf(state_.load(std::memory_order_acquire));
    runChunks(seen, true);
  }
}

unsigned defaultWorkerThreads() {
  if (const char* env = std::getenv("IPUSIM_WORKER_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || n < 1 || n > 64)
      throw std::invalid_argument(std::string("IPUSIM_WORKER_THREADS is '") + env +
                                  "', expected a whole number of threads from 1 to 64");
    return unsigned(n);
  }
  // The CPUs this process may use (a container or taskset may allow fewer than
  // the machine has) and the load other processes put on them now.
  cpu_set_t set;
  CPU_ZERO(&set);
  unsigned cpus = std::thread::hardware_concurrency();
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = unsigned(CPU_COUNT(&set));
  double load[1] = {0};
  if (getloadavg(load, 1) != 1) load[0] = 0;
  return workerThreadsFor(cpus, load[0]);
}

unsigned workerThreadsFor(unsigned cpus, double loadAverage) {
  // A second thread can only help when a CPU is free beside the one the
  // simulation thread takes: measured on a 2-CPU machine at load 8-10 (runs
  // side by side, bench/RESULTS.md), two threads cost 11-16 % more CPU and
  // were not faster, even with the adaptive choice. Two threads at most: the
  // phases of the tutorial-sized workloads gain nothing measurable from more.
  if (cpus < 2 || loadAverage >= double(cpus) - 1.0) return 1;
  return 2;
}

WorkerChoice defaultWorkerChoice() {
  const char* env = std::getenv("IPUSIM_WORKER_CHOICE");
  if (!env || std::strcmp(env, "adaptive") == 0) return WorkerChoice::Adaptive;
  if (std::strcmp(env, "always") == 0) return WorkerChoice::Always;
  throw std::invalid_argument(std::string("IPUSIM_WORKER_CHOICE is '") + env +
                              "', expected 'adaptive' (the default) or 'always'");
}

}  // namespace ipusim::model::hardware
