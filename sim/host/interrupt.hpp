#pragma once
// Ctrl-C (SIGINT), SIGTERM and SIGHUP (a closed terminal; not when ignored,
// as under nohup) for every ipusim command, from the first instruction of
// main() on. Two modes:
//   - immediate (the default: parsing, compiling, loading data, writing
//     reports): the handler removes the temporary files being written
//     (traces/interrupt_cleanup.hpp), says "interrupted" on stderr and exits
//     with kInterruptedExitCode at once;
//   - cooperative (inside a CooperativeInterrupts scope, i.e. while the
//     simulation runs): the first signal sets a flag that the host programs
//     and the program executor poll (model/stop_request.hpp), so the run
//     stops within one program step, unwinds, and leaves no profile; a
//     second signal exits at once as in the immediate mode.
// Either way nothing half-written is left behind and the exit code is below
// 128 (a shell's "killed by a signal" codes start at 128).
#include <csignal>
#include <string>

namespace ipusim::sim {

inline constexpr int kInterruptedExitCode = 3;

void installInterruptHandler();
bool interruptRequested();

// A process group of children this process owns (a sweep's points), or 0 for
// none: on SIGINT or SIGTERM the handler sends the group SIGTERM and waits
// for its members to end before it exits, so no child outlives its parent
// and goes on writing. Set it with SIGINT and SIGTERM blocked around the
// start of the group's first child.
void endProcessGroupOnInterrupt(int processGroup);

// What an interrupted exit says it leaves ("nothing written" by default),
// for a command that keeps finished work: a sweep's points/.
void interruptedLeaves(const std::string& what);

// For a child: when the environment holds kParentProcessVariable=<pid of
// its parent>, the child is sent SIGTERM when that parent dies, even of
// SIGKILL (Linux's PR_SET_PDEATHSIG); if the parent is already gone it
// stops at once (exit kInterruptedExitCode).
inline constexpr const char* kParentProcessVariable = "IPUSIM_PARENT_PID";
void stopWithParentProcess();

// SIGINT, SIGTERM and SIGHUP held while it exists (in the calling thread):
// held around the start of a child and its recording as ours, so that a
// signal never finds a child the handler does not know of.
class InterruptsHeld {
 public:
  InterruptsHeld();
  ~InterruptsHeld();
  InterruptsHeld(const InterruptsHeld&) = delete;
  InterruptsHeld& operator=(const InterruptsHeld&) = delete;

 private:
  sigset_t previous_;
};

// While one exists, the first signal only requests a stop.
class CooperativeInterrupts {
 public:
  CooperativeInterrupts();
  ~CooperativeInterrupts();
  CooperativeInterrupts(const CooperativeInterrupts&) = delete;
  CooperativeInterrupts& operator=(const CooperativeInterrupts&) = delete;
};

}  // namespace ipusim::sim
