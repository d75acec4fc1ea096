#pragma once
// WorkerPool: a small persistent pool that runs the independent parts of one
// BSP phase (the vertices of a compute set, the transfers of an exchange) on
// several host cores.
//
// run(task) calls task(part) for every part in [0, size()): part 0 on the
// calling thread, the others on the pool's threads, and returns when all are
// done. Results are deterministic as long as parts write disjoint memory,
// which BSP guarantees within one phase. size() == 1 starts no thread: run()
// is then a plain call (the sequential path).
//
// Workers spin briefly before sleeping: phases come back-to-back while a
// simulation runs, and a futex wake-up costs more than most phases.
// The pool's threads never call SystemC.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ipusim::model::hardware {

class WorkerPool {
 public:
  // threads: total parts, including the caller; at least 1.
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned size() const { return unsigned(workers_.size()) + 1; }
  // Runs task(part) for each part; rethrows the exception of the lowest part
  // that threw (the one a sequential run would have met first).
  void run(const std::function<void(unsigned part)>& task);

 private:
  void workerLoop(unsigned part);

  std::vector<std::thread> workers_;
  std::vector<std::exception_ptr> errors_;   // per part
  const std::function<void(unsigned)>* task_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};  // bumped per run()
  std::atomic<unsigned> pending_{0};          // worker parts not finished
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable wake_;   // workers: a new generation
  std::condition_variable done_;   // caller: pending_ reached 0
};

// Worker threads for new systems: the IPUSIM_WORKER_THREADS environment
// variable when set (1 = sequential), else min(2, hardware threads).
// Throws std::invalid_argument naming the variable when it is not a number in [1, 64].
unsigned defaultWorkerThreads();

}  // namespace ipusim::model::hardware
