#include "sim/host/interrupt.hpp"

#include "model/stop_request.hpp"
#include "traces/interrupt_cleanup.hpp"

#include <csignal>
#include <unistd.h>

namespace ipusim::sim {

namespace {
volatile std::sig_atomic_t requested = 0;
volatile std::sig_atomic_t cooperative = 0;

void say(const char* text) {
  std::size_t n = 0;
  while (text[n]) ++n;
  const ssize_t ignored = ::write(STDERR_FILENO, text, n);
  (void)ignored;
}

// Async-signal-safe only: unlink, write, _exit.
extern "C" void onInterrupt(int signal) {
  if (cooperative && !requested) {
    requested = 1;
    model::requestStop();
    return;
  }
  requested = 1;
  traces::removeRegisteredFilesNow();
  say(signal == SIGTERM ? "\nipusim: terminated (SIGTERM); nothing written\n"
                        : "\nipusim: interrupted (SIGINT); nothing written\n");
  _exit(kInterruptedExitCode);
}
}  // namespace

void installInterruptHandler() {
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interruptRequested() { return requested != 0; }

CooperativeInterrupts::CooperativeInterrupts() { cooperative = 1; }
CooperativeInterrupts::~CooperativeInterrupts() { cooperative = 0; }

}  // namespace ipusim::sim
