#include "model/hardware/worker_pool.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace ipusim::model::hardware {
namespace {

// Spins of a waiting thread before it sleeps (a pause is 10-140 cycles:
// up to ~0.2 ms). Longer spinning steals the core from other processes.
constexpr int kSpins = 2000;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

WorkerPool::WorkerPool(unsigned threads) {
  if (threads == 0) throw std::invalid_argument("WorkerPool: threads is 0, expected at least 1");
  errors_.resize(threads);
  for (unsigned part = 1; part < threads; ++part) workers_.emplace_back([this, part] { workerLoop(part); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    ++generation_;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::run(const std::function<void(unsigned)>& task) {
  if (workers_.empty()) {
    task(0);
    return;
  }
  for (auto& e : errors_) e = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    pending_ = unsigned(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  try {
    task(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  for (int i = 0; i < kSpins && pending_.load(std::memory_order_acquire) != 0; ++i) cpuRelax();
  if (pending_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_.load() == 0; });
  }
  task_ = nullptr;
  for (auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

void WorkerPool::workerLoop(unsigned part) {
  std::uint64_t seen = 0;
  for (;;) {
    for (int i = 0; i < kSpins && generation_.load(std::memory_order_acquire) == seen; ++i) cpuRelax();
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_) return;
    try {
      (*task_)(part);
    } catch (...) {
      errors_[part] = std::current_exception();
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
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
  const unsigned hw = std::thread::hardware_concurrency();
  return hw >= 2 ? 2 : 1;
}

}  // namespace ipusim::model::hardware
