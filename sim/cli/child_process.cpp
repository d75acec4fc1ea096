#include "sim/cli/child_process.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <csignal>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

extern char** environ;

namespace ipusim::sim {

std::string selfExecutable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

std::string pathArgument(const std::string& path) { return path.rfind('-', 0) == 0 ? "./" + path : path; }

namespace {

// Our environment with `env` added (replacing variables of the same name)
// and the variables named in `unset` left out.
std::vector<std::string> childEnvironment(const std::map<std::string, std::string>& env,
                                          const std::vector<std::string>& unset = {}) {
  std::vector<std::string> strings;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (!env.count(key) && std::find(unset.begin(), unset.end(), key) == unset.end()) strings.push_back(entry);
  }
  for (const auto& [k, v] : env) strings.push_back(k + "=" + v);
  return strings;
}

// The null-terminated pointer arrays posix_spawn takes (into `strings`, which must outlive them).
std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (const auto& s : strings) result.push_back(const_cast<char*>(s.c_str()));
  result.push_back(nullptr);
  return result;
}

}  // namespace

int runChild(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  const std::vector<std::string> envStrings = childEnvironment(env);
  std::vector<char*> args = pointers(argv), envp = pointers(envStrings);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv.at(0).c_str(), nullptr, nullptr, args.data(), envp.data());
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waiting for " + argv[0] + ": " + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

namespace {

int exitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int startChild(const std::vector<std::string>& argv, const std::string& stdoutPath, const std::string& stderrPath,
               const std::map<std::string, std::string>& env, int processGroup,
               const std::vector<std::string>& unset) {
  const std::vector<std::string> envStrings = childEnvironment(env, unset);
  std::vector<char*> args = pointers(argv), envp = pointers(envStrings);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!stdoutPath.empty())
    posix_spawn_file_actions_addopen(&actions, 1, stdoutPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!stderrPath.empty())
    posix_spawn_file_actions_addopen(&actions, 2, stderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);  // the caller may block signals around the start
  short flags = POSIX_SPAWN_SETSIGMASK;
  if (processGroup >= 0) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attributes, processGroup);
  }
  posix_spawnattr_setflags(&attributes, flags);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv.at(0).c_str(), &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

int waitForAnyChild(int& status, bool block) {
  int raw = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &raw, block ? 0 : WNOHANG)) < 0) {
    if (errno == ECHILD) return -1;
    if (errno != EINTR) throw std::runtime_error(std::string("waiting for a child process: ") + std::strerror(errno));
  }
  if (pid > 0) status = exitStatus(raw);
  return pid;
}

}  // namespace ipusim::sim
