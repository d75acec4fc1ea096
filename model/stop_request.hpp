#pragma once
// A process-wide request to stop the simulation (set from a signal handler by
// the host's interrupt handling). ProgramExecutor polls it before every
// program step and throws StopRequested, which unwinds the run; the host
// programs treat that as an interruption, not as an error. The flag is a
// lock-free atomic, so requestStop() is async-signal-safe.
#include <stdexcept>

namespace ipusim::model {

void requestStop() noexcept;
bool stopRequested() noexcept;
void clearStopRequest() noexcept;  // for tests

class StopRequested : public std::runtime_error {
 public:
  StopRequested() : std::runtime_error("the simulation was asked to stop (interrupted)") {}
};

}  // namespace ipusim::model
