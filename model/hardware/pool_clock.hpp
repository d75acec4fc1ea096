#pragma once
// PoolClock: the clock WorkerPool's adaptive choice reads time through (the
// wall time of an epoch of runs on the calling thread). The pool uses the
// steady clock (steadyPoolClock()); a test gives it a clock it advances by
// hand, so that which way the pool chooses follows from the times the test
// states, not from how busy the machine is.
#include <chrono>

namespace ipusim::model::hardware {

class PoolClock {
 public:
  virtual ~PoolClock() = default;
  // Monotonic time since an arbitrary origin. Called by the pool's caller
  // thread only (the thread that calls WorkerPool::run).
  virtual std::chrono::nanoseconds now() const = 0;
};

// std::chrono::steady_clock. Lives as long as the program.
const PoolClock& steadyPoolClock();

}  // namespace ipusim::model::hardware
