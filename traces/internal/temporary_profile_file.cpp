#include "traces/internal/temporary_profile_file.hpp"

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
  return claimedPaths().insert(temporaryPath).second;
}

void releaseTemporaryPath(const std::string& temporaryPath) noexcept {
  const std::lock_guard<std::mutex> lock(claimedMutex);
  claimedPaths().erase(temporaryPath);
}

void removeStaleTemporaries(const std::string& path) noexcept {
  try {
    const fs::path target(path);
    const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
    const std::string prefix = target.filename().string() + kTemporaryInfix;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(directory, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string pidText = name.substr(prefix.size());
      if (pidText.find_first_not_of("0123456789") != std::string::npos || pidText.size() > 9) continue;
      const auto pid = static_cast<pid_t>(std::stol(pidText));
      if (pid != ::getpid() && !processExists(pid)) fs::remove(entry.path(), ec);
    }
  } catch (...) {
    // Clean-up of someone else's leftovers must never stop a new profile.
  }
}

}  // namespace ipusim::traces::internal
