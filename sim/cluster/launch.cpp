#include "sim/cluster/launch.hpp"

#include <cstdlib>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

extern char** environ;

namespace ipusim::sim::cluster {

namespace {

// The value of `name`, a whole number in [low, high], or `fallback` when unset.
int variable(const char* name, int low, int high, int fallback) {
  const char* text = std::getenv(name);
  if (!text) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < low || value > high)
    throw std::runtime_error(std::string("environment variable ") + name + "='" + text +
                             "' (set by the MPI launcher): expected a whole number from " + std::to_string(low) +
                             " to " + std::to_string(high));
  return static_cast<int>(value);
}

constexpr int kMaxRanks = 1 << 24;

}  // namespace

LaunchInfo launchInfo() {
  LaunchInfo info;
  const char* rankName = std::getenv("OMPI_COMM_WORLD_RANK") ? "OMPI_COMM_WORLD_RANK"
                         : std::getenv("PMIX_RANK")          ? "PMIX_RANK"
                         : std::getenv("PMI_RANK")           ? "PMI_RANK"
                                                             : nullptr;
  if (!rankName) return info;
  const char* sizeName = std::getenv("OMPI_COMM_WORLD_SIZE") ? "OMPI_COMM_WORLD_SIZE" : "PMI_SIZE";
  info.launched = true;
  info.size = variable(sizeName, 1, kMaxRanks, 0);  // 0: no launcher's variable says (srun's PMIx): MPI will
  info.rank = variable(rankName, 0, (info.size ? info.size : kMaxRanks) - 1, 0);
  info.localSize = variable("OMPI_COMM_WORLD_LOCAL_SIZE", 1, info.size ? info.size : kMaxRanks, 1);
  return info;
}

std::vector<std::string> launcherVariables() {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    for (const char* prefix : {"OMPI_", "PMIX_", "PMI_"})
      if (name.rfind(prefix, 0) == 0) {
        names.push_back(name);
        break;
      }
  }
  return names;
}

std::FILE* openLauncherTerminal() {
  const std::string path = "/proc/" + std::to_string(::getppid()) + "/fd/2";
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  if (::isatty(fd) != 1) {
    ::close(fd);
    return nullptr;
  }
  std::FILE* terminal = ::fdopen(fd, "w");
  if (!terminal) ::close(fd);
  return terminal;
}

}  // namespace ipusim::sim::cluster
