#pragma once
// Files to remove when the process is stopped by a signal: the temporary
// files of profiles and exported traces being written. A signal handler
// cannot run destructors, so writers register their temporary file here and
// the handler calls removeRegisteredFilesNow(), which uses only unlink(2)
// and is async-signal-safe. Registration itself is not signal-safe; it is
// thread-safe. At most kMaxRegisteredFiles files at once, each path shorter
// than kMaxRegisteredPath bytes; registering more throws std::length_error.
#include <cstddef>
#include <string>

namespace ipusim::traces {

inline constexpr std::size_t kMaxRegisteredFiles = 16;
inline constexpr std::size_t kMaxRegisteredPath = 4096;

void registerFileToRemoveOnInterrupt(const std::string& path);
void unregisterFileToRemoveOnInterrupt(const std::string& path) noexcept;
// Unlinks every registered file. Async-signal-safe; returns how many were removed.
int removeRegisteredFilesNow() noexcept;

// Installs `handler` for SIGINT, SIGTERM and SIGHUP (unless SIGHUP is
// ignored, as under nohup), each blocked while it runs.
void handleInterruptSignals(void (*handler)(int));

// For a program with nothing else to undo on SIGINT or SIGTERM (the viewer;
// `ipusim` has its own handler, sim/host/interrupt.hpp): installs a handler
// that removes the registered files, writes `message` (a string literal) to
// stderr and exits with `exitCode`.
void removeRegisteredFilesOnInterrupt(const char* message, int exitCode);

}  // namespace ipusim::traces
