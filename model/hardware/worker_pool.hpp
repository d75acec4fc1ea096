#pragma once
// WorkerPool: a small persistent pool that runs the independent parts of one
// BSP phase (the vertices of a compute set, the transfers of an exchange) on
// several host cores, and that never makes a run slower than one thread would.
//
// run(key, chunks, task) calls task(chunk) for every chunk in [0, chunks) and
// returns when all are done. Chunks are claimed one at a time from the two
// ends of the job: the calling thread from the first chunk up, the workers
// from the last chunk down, until they meet. The caller starts at once and
// takes chunks until none are left, so a worker that wakes late (its core busy
// with other work) finds the chunks gone and goes back to sleep, and the
// caller never waits for a worker that has not started. The two ends keep the
// data where it was: the phases' chunks are in tile order, so on a quiet
// machine the caller runs the low tiles and the worker the high ones, phase
// after phase, and more of each tile's memory stays in one core's cache
// (claimed from one shared counter, chunks changed cores from phase to phase:
// the tutorial forced onto the pool of a 2-CPU machine took 1.44x the wall
// time of one thread then, 1.25x with the two ends; bench/RESULTS.md — the
// exchanges' sources still cross). Results are deterministic
// as long as each chunk's work is a fixed function of its index and chunks
// write disjoint memory (BSP guarantees the latter within one phase): which
// thread runs a chunk does not change what it computes.
//
// Adaptive choice: one way for all phases at a time, chosen by epochs. Where
// a phase runs decides where the next phase finds its data (in this core's
// cache or the other's), so the two ways cannot be compared phase by phase:
// measured on a 2-CPU machine, a phase run alone between phases run on the
// pool took 2-3x its time in a run on one thread, and the per-phase choice
// kept the pool although the whole run was 1.5x slower than one thread. So
// the pool runs an epoch of phases (those with a key: whole cycles of the
// recurring phases, a training step typically) one way, then one the other
// way, and compares the two epochs' wall time per keyed run on the calling
// thread's clock, over whole cycles (but the epoch's first, while the data
// moves): all the caller did in them, not the keyed runs alone, since the
// work between them also pays for data that another core wrote (timing the
// keyed runs alone chose the pool for the tutorial with its products
// computed whole, and the run took 1.3x the time of one thread).
// A trial epoch of the other way sits between two epochs of the chosen way,
// and changes the choice only when it beats the better of the two: on a
// loaded machine an epoch of either way now and then takes twice its time
// (the scheduler gave its core to another process for a slice or two), and
// comparing the trial with the epoch before it alone kept the pool for
// 2-5 % of the tutorial's phases under a CPU hog, each slower than on one
// thread. The pool must also beat the caller alone by kPoolMargin, so that
// a tie or noise leaves the work on one thread. The choice is kept for a
// number of epochs that doubles (up to kStayLast) while trials confirm it,
// so that a change of load (another process taking a core) is noticed. A
// trial that has lost by far after its first timed cycle ends there. On
// a busy machine the pool thus falls back to the calling thread alone; on
// a quiet one it uses every thread where that is clearly faster. The epochs'
// times are read through a PoolClock (the steady clock unless a test gives
// another): the choice is a function of those times alone.
//
// Waiting: workers spin for at most kWorkerSpin after their last chunk (phases
// come back-to-back while a simulation runs) and then sleep on a condition
// variable; the caller spins at most kCallerSpin for chunks still running on a
// worker, then sleeps. No thread spins longer than that, so a pool thread
// never holds a core the simulation thread needs.
// The pool's threads never call SystemC.
#include "model/hardware/pool_clock.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ipusim::model::hardware {

// How run() chooses between the caller alone and the whole pool.
enum class WorkerChoice {
  Adaptive,  // the faster one, measured by epochs of whole cycles (the default)
  Always,    // always the whole pool (tests, and benchmarks of the parallel path)
};

class WorkerPool {
 public:
  // A key for run() that is not a recurring phase: always runs on the pool.
  static constexpr std::uint64_t kNoKey = ~std::uint64_t(0);

  // The most chunks one run() takes.
  static constexpr unsigned kMaxChunks = 0xFFFF;

  // threads: total threads, including the caller; at least 1. `clock`: what
  // the adaptive choice times epochs with; it must outlive the pool.
  explicit WorkerPool(unsigned threads, WorkerChoice choice = WorkerChoice::Adaptive,
                      const PoolClock& clock = steadyPoolClock());
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned size() const { return unsigned(workers_.size()) + 1; }
  // Runs task(chunk) for each chunk in [0, chunks); key names the phase whose
  // timings choose between one thread and the pool (kNoKey: the pool).
  // Rethrows the exception of the lowest chunk that threw (the one a
  // sequential run would have met first). Throws std::invalid_argument when
  // chunks exceeds kMaxChunks.
  void run(std::uint64_t key, unsigned chunks, const std::function<void(unsigned chunk)>& task);
  // The same, but where the chunks would run one after the other on the
  // caller, whole() runs instead: the work as one thread does it (cutting a
  // phase into chunks costs a little even on one thread: the chunks' edges,
  // a product's operands read once per chunk).
  void run(std::uint64_t key, unsigned chunks, const std::function<void(unsigned chunk)>& task,
           const std::function<void()>& whole);

  // How many run() calls used the pool and how many the caller alone.
  std::uint64_t parallelRuns() const { return parallelRuns_; }
  std::uint64_t sequentialRuns() const { return sequentialRuns_; }
  // Chunks run by the pool's threads (not the caller), over all runs.
  std::uint64_t chunksOnWorkers() const { return chunksOnWorkers_.load(); }

 private:
  enum Way { kSequential = 0, kParallel = 1 };
  using Time = std::chrono::nanoseconds;  // PoolClock::now()

  // Counts a keyed run into the epoch, ending the epoch first at a cycle
  // boundary when it has enough timed runs.
  void startRun(std::uint64_t key);
  // startRun(key), then whether this run takes the pool.
  bool startsParallel(std::uint64_t key);
  // The epoch's wall time per keyed run so far, over its timed cycles (or
  // over all its runs when the first phase never came back).
  double nsPerTimedRun(Time now) const;
  // Whether the trial epoch, at a cycle boundary after its untimed cycle,
  // has already lost by kTrialGiveUp (it then ends early).
  bool trialLost(Time now) const;
  // Records the epoch's time per run and picks the next epoch's way.
  void finishEpoch(Time now);
  void runParallel(unsigned chunks, const std::function<void(unsigned)>& task);
  // Claims and runs chunks of generation `generation` until none are left,
  // from the front (the caller) or the back (workers); returns how many this
  // thread ran.
  unsigned runChunks(std::uint32_t generation, bool onWorker);
  void workerLoop();

  // The job word: generation (high 32 bits), then the first unclaimed chunk
  // (16 bits) and one past the last unclaimed chunk (low 16 bits).
  static std::uint32_t generationOf(std::uint64_t state) { return std::uint32_t(state >> 32); }
  static unsigned frontOf(std::uint64_t state) { return unsigned(state >> 16) & 0xFFFF; }
  static unsigned backOf(std::uint64_t state) { return unsigned(state) & 0xFFFF; }
  static std::uint64_t jobState(std::uint32_t generation, unsigned front, unsigned back) {
    return std::uint64_t(generation) << 32 | std::uint64_t(front) << 16 | back;
  }

  const WorkerChoice choice_;
  const PoolClock& clock_;
  std::vector<std::thread> workers_;
  // The caller thread only:
  std::uint64_t epochFirstKey_ = kNoKey;  // the phase that started the epoch
  std::uint32_t epochRuns_ = 0;     // keyed runs in the current epoch
  std::uint32_t epochCycles_ = 0;   // cycles completed in it (the first is not timed)
  Time timedFrom_{0};               // when its timed part began
  std::uint32_t timedRuns_ = 0;     // keyed runs since then
  // Where the choice stands: epochs of the chosen way (the first epoch is
  // one, on the caller), then a trial epoch of the other way, then one more
  // of the chosen way, after which the choice is made.
  enum class Stage { Staying, Trial, Confirming };
  Stage stage_ = Stage::Staying;
  Way epochWay_ = kSequential;      // the way of the current epoch
  Way chosen_ = kSequential;        // the way kept between trials
  double chosenNs_ = 0;             // the chosen way's last epoch: wall time per keyed run
  double trialNs_ = 0;              // the last trial's
  std::uint32_t stay_ = 0;          // epochs the choice is kept before the next trial (0: none made yet)
  std::uint32_t epochsLeft_ = 1;    // of those, still to run
  std::uint64_t parallelRuns_ = 0, sequentialRuns_ = 0;

  // The current job (see jobState): a claim is a compare-and-swap of the
  // whole word, so it succeeds only for the job it was made in — a worker
  // holding a stale word from the last job can never claim in the next.
  std::atomic<std::uint64_t> state_{0};
  // The current job's chunk count. Read only by a thread that claimed one of
  // its chunks: the job cannot end, nor the next begin, before that chunk is done.
  std::atomic<unsigned> chunks_{0};
  const std::function<void(unsigned)>* task_ = nullptr;
  std::vector<std::exception_ptr> errors_;    // per chunk
  std::atomic<bool> failed_{false};
  std::atomic<unsigned> finished_{0};         // chunks of the current job done
  std::atomic<std::uint64_t> chunksOnWorkers_{0};
  std::atomic<unsigned> sleepers_{0};         // workers waiting on wake_
  std::atomic<bool> callerSleeping_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable wake_;   // workers: a new generation
  std::condition_variable done_;   // caller: every chunk finished
};

// Worker threads for new systems: the IPUSIM_WORKER_THREADS environment
// variable when set (1 = sequential), else workerThreadsFor(the CPUs this
// process may run on, sched_getaffinity). Throws std::invalid_argument naming
// the variable when it is not a number in [1, 64].
unsigned defaultWorkerThreads();
// 2 when at least two CPUs are allowed, else 1. Not the load average: the
// adaptive choice measures what a second thread gains now, while the load
// average remembers the last minute — it counted the run just before (a
// benchmark's previous repetition) as "a CPU busy" and took one thread where
// the pool was 1.4x faster (bench/RESULTS.md).
unsigned workerThreadsFor(unsigned cpus);

// The pool's choice for new systems: IPUSIM_WORKER_CHOICE "adaptive" (the
// default) or "always". Throws std::invalid_argument naming the variable and
// the accepted values otherwise.
WorkerChoice defaultWorkerChoice();

}  // namespace ipusim::model::hardware
