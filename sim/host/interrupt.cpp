#include "sim/host/interrupt.hpp"

#include "model/stop_request.hpp"
#include "traces/interrupt_cleanup.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <string>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ipusim::sim {

namespace {
volatile std::sig_atomic_t requested = 0;
volatile std::sig_atomic_t cooperative = 0;
volatile std::sig_atomic_t childGroup = 0;
// What the exit leaves, after "; ": "nothing written" unless a command said
// otherwise (interruptedLeaves, outside the handler only).
std::string leavesText;
const char* volatile leaves = nullptr;

void say(const char* text) {
  std::size_t n = 0;
  while (text[n]) ++n;
  const ssize_t ignored = ::write(STDERR_FILENO, text, n);
  (void)ignored;
}

// Async-signal-safe only: kill, waitpid, unlink, write, _exit.
extern "C" void onInterrupt(int signal) {
  if (cooperative && !requested) {
    requested = 1;
    model::requestStop();
    return;
  }
  requested = 1;
  if (const int group = childGroup; group > 0) {
    const int saved = errno;
    ::kill(-group, SIGTERM);
    while (::waitpid(-group, nullptr, 0) > 0 || errno == EINTR) {
    }
    errno = saved;
  }
  traces::removeRegisteredFilesNow();
  say(signal == SIGTERM   ? "\nipusim: terminated (SIGTERM); "
      : signal == SIGHUP ? "\nipusim: hung up (SIGHUP); "
                         : "\nipusim: interrupted (SIGINT); ");
  say(leaves ? leaves : "nothing written");
  say("\n");
  _exit(kInterruptedExitCode);
}
}  // namespace

void installInterruptHandler() { traces::handleInterruptSignals(onInterrupt); }

bool interruptRequested() { return requested != 0; }

void endProcessGroupOnInterrupt(int processGroup) { childGroup = processGroup; }

void interruptedLeaves(const std::string& what) {
  leaves = nullptr;  // the handler never reads the text while it changes
  leavesText = what;
  leaves = leavesText.c_str();
}

void stopWithParentProcess() {
  const char* parent = std::getenv(kParentProcessVariable);
  if (!parent || !*parent) return;
  const std::string expected = parent;
  ::unsetenv(kParentProcessVariable);  // not inherited by our own children
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (std::to_string(::getppid()) != expected) {  // the parent died before the line above
    say("ipusim: the parent process is gone; nothing written\n");
    _exit(kInterruptedExitCode);
  }
}

InterruptsHeld::InterruptsHeld() {
  sigset_t held;
  sigemptyset(&held);
  sigaddset(&held, SIGINT);
  sigaddset(&held, SIGTERM);
  sigaddset(&held, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &held, &previous_);
}

InterruptsHeld::~InterruptsHeld() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

CooperativeInterrupts::CooperativeInterrupts() { cooperative = 1; }
CooperativeInterrupts::~CooperativeInterrupts() { cooperative = 0; }

}  // namespace ipusim::sim
