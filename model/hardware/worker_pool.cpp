#include "model/hardware/worker_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ipusim::model::hardware {
namespace {

// Spin limits (estimates, not fits): a futex wake-up and the scheduler's
// latency cost some 5-50 us, so a worker keeps watching for the next phase
// for about that long; the caller waits at most about one chunk's time for
// chunks still running on a worker before it sleeps.
constexpr auto kWorkerSpin = std::chrono::microseconds(20);
constexpr auto kCallerSpin = std::chrono::microseconds(50);
// Epochs (estimates, not fits). An epoch is whole cycles of the recurring
// phases (a cycle ends when the epoch's first phase runs again: a training
// step, typically), so that both ways time the same work; its first cycle
// is not timed (the data moves to where the new way wants it), and it ends at
// a cycle boundary once kEpochSamples runs were timed: the tutorial (3 keyed
// phases a step) takes 1 + 11 steps, a large model whose phases each run once
// a step 1 + 1. A first phase that never comes back ends the epoch after
// kEpochMaxRuns runs. After a decision the choice is kept kStayFirst epochs,
// doubling up to kStayLast while trials confirm it (a trial of the slower way
// costs up to an epoch of slower runs: once the answer is clear, trials must
// be rare), and back to kStayFirst when a trial changes it.
constexpr std::uint32_t kEpochSamples = 32;
constexpr std::uint32_t kEpochMaxRuns = 4096;
constexpr std::uint32_t kStayFirst = 4;
constexpr std::uint32_t kStayLast = 256;
// The pool is chosen only when it takes less than (1 - kPoolMargin) of the
// caller's time alone (an estimate, not a fit): epochs of one way differ by
// some 3 % on a quiet 2-CPU VM, and a second core's worth of CPU for a
// smaller gain is no gain to a machine's other users.
constexpr double kPoolMargin = 0.05;
// A trial that, after a whole timed cycle, already takes more than this
// times the kept way's time per run has lost: it ends there (an estimate,
// not a fit). Under a CPU hog a trial of the pool cost far more than its
// share: the worker, preempted mid-chunk, kept the caller waiting a
// scheduler slice, and 12 steps of it nine times a run made the default
// 1.06x one thread in wall time (bench/RESULTS.md). Quiet, the tutorial's
// pool takes 1.65x; a pool that saves time is far below this.
constexpr double kTrialGiveUp = 1.5;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or `limit` passed; returns done().
template <class Done>
bool spinUntil(Done&& done, std::chrono::steady_clock::duration limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpuRelax();
    }
    if (std::chrono::steady_clock::now() >= end) return done();
  }
}

}  // namespace

WorkerPool::WorkerPool(unsigned threads, WorkerChoice choice, const PoolClock& clock) : choice_(choice), clock_(clock) {
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

void WorkerPool::run(std::uint64_t key, unsigned chunks, const std::function<void(unsigned)>& task) {
  run(key, chunks, task, [&] {
    for (unsigned c = 0; c < chunks; ++c) task(c);
  });
}

void WorkerPool::run(std::uint64_t key, unsigned chunks, const std::function<void(unsigned)>& task,
                     const std::function<void()>& whole) {
  if (chunks == 0) return;
  if (chunks > kMaxChunks)
    throw std::invalid_argument("WorkerPool::run: " + std::to_string(chunks) + " chunks, expected at most " +
                                std::to_string(kMaxChunks));
  if (chunks > 1 && !workers_.empty() && (key == kNoKey || choice_ == WorkerChoice::Always || startsParallel(key))) {
    runParallel(chunks, task);
    return;
  }
  ++sequentialRuns_;
  whole();
}

bool WorkerPool::startsParallel(std::uint64_t key) {
  startRun(key);
  return epochWay_ == kParallel;
}

void WorkerPool::startRun(std::uint64_t key) {
  const Time now = clock_.now();
  if (epochRuns_ > 0 && key == epochFirstKey_) {  // the phases come round again: a cycle is complete
    if (++epochCycles_ == 1) {  // the untimed first cycle ends: the data may have moved
      timedFrom_ = now;
      timedRuns_ = 0;
    } else if (timedRuns_ >= kEpochSamples || trialLost(now)) {
      finishEpoch(now);
    }
  }
  if (epochRuns_ >= kEpochMaxRuns) finishEpoch(now);  // the first phase never came back
  if (epochRuns_ == 0) {  // this run starts the epoch
    epochFirstKey_ = key;
    timedFrom_ = now;
    timedRuns_ = 0;
  }
  ++epochRuns_;
  ++timedRuns_;
}

double WorkerPool::nsPerTimedRun(Time now) const {
  return double((now - timedFrom_).count()) / timedRuns_;
}

bool WorkerPool::trialLost(Time now) const {
  return stage_ == Stage::Trial && chosenNs_ > 0 && nsPerTimedRun(now) > kTrialGiveUp * chosenNs_;
}

void WorkerPool::finishEpoch(Time now) {
  const double nsPerRun = nsPerTimedRun(now);
  switch (stage_) {
    case Stage::Staying:  // an epoch of the chosen way
      chosenNs_ = nsPerRun;
      if (--epochsLeft_ == 0) stage_ = Stage::Trial;
      break;
    case Stage::Trial:  // the other way's epoch ended: one more of the chosen way before deciding
      trialNs_ = nsPerRun;
      stage_ = Stage::Confirming;
      break;
    case Stage::Confirming: {
      // The chosen way's better epoch of the two around the trial, against
      // the trial: a trial must beat both to change the choice.
      const double chosenNs = std::min(chosenNs_, nsPerRun);
      const double poolNs = chosen_ == kParallel ? chosenNs : trialNs_;
      const double aloneNs = chosen_ == kSequential ? chosenNs : trialNs_;
      const Way faster = poolNs < (1 - kPoolMargin) * aloneNs ? kParallel : kSequential;
      stay_ = faster == chosen_ && stay_ > 0 ? std::min(2 * stay_, kStayLast) : kStayFirst;
      chosen_ = faster;
      epochsLeft_ = stay_;
      stage_ = Stage::Staying;
      break;
    }
  }
  epochWay_ = stage_ == Stage::Trial ? (chosen_ == kParallel ? kSequential : kParallel) : chosen_;
  epochRuns_ = epochCycles_ = timedRuns_ = 0;
}

void WorkerPool::runParallel(unsigned chunks, const std::function<void(unsigned)>& task) {
  ++parallelRuns_;
  errors_.assign(chunks, nullptr);
  failed_.store(false, std::memory_order_relaxed);
  finished_.store(0, std::memory_order_relaxed);
  task_ = &task;
  const std::uint32_t generation = generationOf(state_.load(std::memory_order_relaxed)) + 1;
  chunks_.store(chunks, std::memory_order_relaxed);
  // Publishes the job. seq_cst with the sleepers_ load below (and the
  // worker's sleepers_ increment and state_ load): either this thread sees a
  // sleeper or the sleeper sees the job.
  state_.store(jobState(generation, 0, chunks), std::memory_order_seq_cst);
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
    const unsigned front = frontOf(state), back = backOf(state);
    if (front >= back) break;
    const unsigned chunk = onWorker ? back - 1 : front;
    const std::uint64_t claimed = onWorker ? jobState(generation, front, back - 1) : jobState(generation, front + 1, back);
    // A successful claim proves the job is still current: it cannot finish
    // before this chunk does, so task_ and chunks_ stay valid until then.
    if (!state_.compare_exchange_weak(state, claimed, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
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
    const unsigned total = chunks_.load(std::memory_order_relaxed);
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
  // The CPUs this process may use (a container or taskset may allow fewer than the machine has).
  cpu_set_t set;
  CPU_ZERO(&set);
  unsigned cpus = std::thread::hardware_concurrency();
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = unsigned(CPU_COUNT(&set));
  return workerThreadsFor(cpus);
}

unsigned workerThreadsFor(unsigned cpus) {
  // Two threads at most: the phases of the tutorial-sized workloads gain
  // nothing measurable from more, and the pool's adaptive choice decides
  // whether the second is used at all.
  return cpus < 2 ? 1 : 2;
}

WorkerChoice defaultWorkerChoice() {
  const char* env = std::getenv("IPUSIM_WORKER_CHOICE");
  if (!env || std::strcmp(env, "adaptive") == 0) return WorkerChoice::Adaptive;
  if (std::strcmp(env, "always") == 0) return WorkerChoice::Always;
  throw std::invalid_argument(std::string("IPUSIM_WORKER_CHOICE is '") + env +
                              "', expected 'adaptive' (the default) or 'always'");
}

}  // namespace ipusim::model::hardware
