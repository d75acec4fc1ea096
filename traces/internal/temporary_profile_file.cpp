#include "traces/internal/temporary_profile_file.hpp"

#include "traces/interrupt_cleanup.hpp"

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include <sys/types.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ipusim::traces::internal {

namespace {
constexpr const char* kTemporaryInfix = ".tmp-";

std::mutex claimedMutex;
std::set<std::string>& claimedPaths() {
  static std::set<std::string> paths;
  return paths;
}

bool processExists(pid_t pid) {
  // Signal 0 checks existence only; EPERM means it exists but is not ours.
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}
}  // namespace

std::string temporaryProfilePath(const std::string& path) {
  return path + kTemporaryInfix + std::to_string(::getpid());
}

bool claimTemporaryPath(const std::string& temporaryPath) {
  const std::lock_guard<std::mutex> lock(claimedMutex);
  if (!claimedPaths().insert(temporaryPath).second) return false;
  try {
    registerFileToRemoveOnInterrupt(temporaryPath);  // an interrupt must not leave it behind
  } catch (...) {
    claimedPaths().erase(temporaryPath);
    throw;
  }
  return true;
}

void releaseTemporaryPath(const std::string& temporaryPath) noexcept {
  const std::lock_guard<std::mutex> lock(claimedMutex);
  if (claimedPaths().erase(temporaryPath)) unregisterFileToRemoveOnInterrupt(temporaryPath);
}

namespace {
// Calls fn(entry path, pid) for every "<path>.tmp-<pid>" next to `path`.
template <typename Fn>
void forEachTemporary(const std::string& path, Fn&& fn) {
  const fs::path target(path);
  const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + kTemporaryInfix;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pidText = name.substr(prefix.size());
    if (pidText.find_first_not_of("0123456789") != std::string::npos || pidText.size() > 9) continue;
    fn(entry.path(), static_cast<pid_t>(std::stol(pidText)));
  }
}
}  // namespace

void removeStaleTemporaries(const std::string& path) noexcept {
  try {
    forEachTemporary(path, [](const fs::path& file, pid_t pid) {
      std::error_code ec;
      if (pid != ::getpid() && !processExists(pid)) fs::remove(file, ec);
    });
  } catch (...) {
    // Clean-up of someone else's leftovers must never stop a new profile.
  }
}

long otherLiveWriter(const std::string& path) noexcept {
  long other = 0;
  try {
    forEachTemporary(path, [&](const fs::path&, pid_t pid) {
      if (pid != ::getpid() && processExists(pid)) other = pid;
    });
  } catch (...) {
  }
  return other;
}

}  // namespace ipusim::traces::internal
