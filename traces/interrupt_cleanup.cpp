#include "traces/interrupt_cleanup.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include <csignal>
#include <unistd.h>

namespace ipusim::traces {
namespace {

// A slot is published by storing `used = true` after its path is written and
// retired by storing `used = false` before the path may change: the handler
// reads only published, complete paths.
struct Slot {
  std::atomic<bool> used{false};
  char path[kMaxRegisteredPath] = {};
};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler reads these flags");

std::array<Slot, kMaxRegisteredFiles> slots;
std::mutex registrationMutex;

}  // namespace

void registerFileToRemoveOnInterrupt(const std::string& path) {
  if (path.empty() || path.size() >= kMaxRegisteredPath)
    throw std::length_error(path.substr(0, 200) + ": path too long to clean up on interrupt (limit " +
                            std::to_string(kMaxRegisteredPath - 1) + " bytes)");
  const std::lock_guard<std::mutex> lock(registrationMutex);
  for (Slot& slot : slots) {
    if (slot.used.load()) continue;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.used.store(true);
    return;
  }
  throw std::length_error(path + ": more than " + std::to_string(kMaxRegisteredFiles) +
                          " files being written at once");
}

void unregisterFileToRemoveOnInterrupt(const std::string& path) noexcept {
  const std::lock_guard<std::mutex> lock(registrationMutex);
  for (Slot& slot : slots)
    if (slot.used.load() && path == slot.path) {
      slot.used.store(false);
      return;
    }
}

int removeRegisteredFilesNow() noexcept {
  int removed = 0;
  for (Slot& slot : slots)
    if (slot.used.load() && ::unlink(slot.path) == 0) ++removed;
  return removed;
}

namespace {
const char* interruptMessage = "";
int interruptExitCode = 1;

extern "C" void removeFilesAndExit(int) {
  removeRegisteredFilesNow();
  std::size_t n = 0;
  while (interruptMessage[n]) ++n;
  const ssize_t ignored = ::write(STDERR_FILENO, interruptMessage, n);
  (void)ignored;
  _exit(interruptExitCode);
}
}  // namespace

void handleInterruptSignals(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaddset(&action.sa_mask, SIGHUP);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // SIGHUP (the terminal closed) unless it is ignored, as nohup leaves it:
  // then the run goes on, as nohup promises.
  struct sigaction hangUp {};
  if (sigaction(SIGHUP, nullptr, &hangUp) == 0 && hangUp.sa_handler != SIG_IGN) sigaction(SIGHUP, &action, nullptr);
}

void removeRegisteredFilesOnInterrupt(const char* message, int exitCode) {
  interruptMessage = message;
  interruptExitCode = exitCode;
  handleInterruptSignals(removeFilesAndExit);
}

}  // namespace ipusim::traces
