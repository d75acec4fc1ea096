#include "sim/host/interrupt.hpp"

#include <csignal>
#include <unistd.h>

namespace ipusim::sim {

namespace {
volatile std::sig_atomic_t requested = 0;

extern "C" void onInterrupt(int signal) {
  if (requested) _exit(128 + signal);  // second Ctrl-C: no more waiting
  requested = 1;
}
}  // namespace

void installInterruptHandler() {
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interruptRequested() { return requested != 0; }

}  // namespace ipusim::sim
