#pragma once
// WorkerPool: a small persistent pool that runs the independent parts of one
// BSP phase (the vertices of a compute set, the transfers of an exchange) on
// several host cores, and that never makes a run slower than one thread would.
//
// run(key, chunks, task) calls task(chunk) for every chunk in [0, chunks) and
// returns when all are done. Chunks are claimed one at a time from a shared
// counter: the calling thread starts at once and takes chunks until none are
// left, a worker that wakes late (its core busy with other work) finds the
// chunks gone and goes back to sleep, so the caller never waits for a worker
// that has not started. Results are deterministic as long as each chunk's work
// is a fixed function of its index and chunks write disjoint memory (BSP
// guarantees the latter within one phase): which thread runs a chunk does not
// change what it computes.
//
// Adaptive choice: the pool times every run of a phase (key) on the calling
// thread's clock, keeps a smoothed wall time for running it on the caller alone
// and for running it on the pool, and uses the faster one, trying the other
// now and then (every 16 runs of the phase, the interval doubling up to 1024
// while the trials confirm the choice) so that a change of load (another
// process taking a core) is noticed. On a busy machine the pool thus falls back to the calling
// thread alone; on a quiet one it uses every thread.
//
// Waiting: workers spin for at most kWorkerSpin after their last chunk (phases
// come back-to-back while a simulation runs) and then sleep on a condition
// variable; the caller spins at most kCallerSpin for chunks still running on a
// worker, then sleeps. No thread spins longer than that, so a pool thread
// never holds a core the simulation thread needs.
// The pool's threads never call SystemC.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ipusim::model::hardware {

// How run() chooses between the caller alone and the whole pool.
enum class WorkerChoice {
  Adaptive,  // the faster one, measured per phase (the default)
  Always,    // always the whole pool (tests, and benchmarks of the parallel path)
};

class WorkerPool {
 public:
  // A key for run() that is not a recurring phase: always runs on the pool.
  static constexpr std::uint64_t kNoKey = ~std::uint64_t(0);

  // threads: total threads, including the caller; at least 1.
  explicit WorkerPool(unsigned threads, WorkerChoice choice = WorkerChoice::Adaptive);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned size() const { return unsigned(workers_.size()) + 1; }
  // Runs task(chunk) for each chunk in [0, chunks); key names the phase whose
  // timings choose between one thread and the pool (kNoKey: the pool).
  // Rethrows the exception of the lowest chunk that threw (the one a
  // sequential run would have met first).
  void run(std::uint64_t key, unsigned chunks, const std::function<void(unsigned chunk)>& task);

  // How many run() calls used the pool and how many the caller alone.
  std::uint64_t parallelRuns() const { return parallelRuns_; }
  std::uint64_t sequentialRuns() const { return sequentialRuns_; }
  // Chunks run by the pool's threads (not the caller), over all runs.
  std::uint64_t chunksOnWorkers() const { return chunksOnWorkers_.load(); }

 private:
  // Smoothed wall time of one phase run either way.
  struct PhaseTiming {
    double sequentialNs = 0, parallelNs = 0;
    std::uint32_t sequentialSamples = 0, parallelSamples = 0;
    std::uint32_t runsSinceOther = 0;  // runs since the slower way was last tried
    std::uint32_t trialEvery = 16;     // runs between trials of the slower way
    bool trial = false;                // this run tries the slower way
  };

  bool chooseParallel(PhaseTiming& timing) const;
  static void record(PhaseTiming& timing, bool parallel, double ns);
  void runParallel(unsigned chunks, const std::function<void(unsigned)>& task);
  void runSequential(unsigned chunks, const std::function<void(unsigned)>& task);
  // Claims and runs chunks of generation `generation` until none are left;
  // returns how many this thread ran.
  unsigned runChunks(std::uint32_t generation, bool onWorker);
  void workerLoop();

  static std::uint32_t generationOf(std::uint64_t state) { return std::uint32_t(state >> 32); }
  static std::uint32_t nextChunkOf(std::uint64_t state) { return std::uint32_t(state); }

  const WorkerChoice choice_;
  std::vector<std::thread> workers_;
  std::unordered_map<std::uint64_t, PhaseTiming> timings_;  // caller thread only
  std::uint64_t parallelRuns_ = 0, sequentialRuns_ = 0;

  // The current job: generation (high 32 bits) and next unclaimed chunk (low
  // 32 bits) in one word, so a claim is valid only for the job it was made in.
  std::atomic<std::uint64_t> state_{0};
  // The chunk count of generation g is chunksOf_[g % 2]. One slot per parity,
  // not one word: a worker holding a stale state (g-1, c) while the caller
  // prepares job g must not compare c with job g's count (it could claim a
  // chunk past the end of job g-1 in the moment before job g is published).
  // Job g+1, which reuses g-1's slot, is prepared only after job g is
  // published, so a claim made against g-1's count can no longer succeed.
  std::atomic<unsigned> chunksOf_[2] = {0, 0};
  std::atomic<unsigned>& chunksOf(std::uint32_t generation) { return chunksOf_[generation % 2]; }
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
// process may run on (sched_getaffinity), the 1-minute load average). Throws
// std::invalid_argument naming the variable when it is not a number in [1, 64].
unsigned defaultWorkerThreads();
// 2 when at least two CPUs are allowed and fewer than cpus - 1 of them are
// busy on average with other work (loadAverage), else 1.
unsigned workerThreadsFor(unsigned cpus, double loadAverage);

// The pool's choice for new systems: IPUSIM_WORKER_CHOICE "adaptive" (the
// default) or "always". Throws std::invalid_argument naming the variable and
// the accepted values otherwise.
WorkerChoice defaultWorkerChoice();

}  // namespace ipusim::model::hardware
