#pragma once
// Running the built `ipusim` binary from tests, the way a user would.
#include "tests/test_build.hpp"

#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

namespace ipusim::test {

// Sanitized builds run 2-10x slower: tests scale their waits for a run to
// reach a state by kSlowdown, and wall-clock bounds that only a release build
// can promise skip themselves (kSanitizedBuild). Asked at run time: the
// sanitizer stage links these tests' objects, compiled once, against its
// sanitized libraries (tests/test_build.hpp).
inline const bool kSanitizedBuild = sanitizedBuild();
inline const int kSlowdown = kSanitizedBuild ? 10 : 1;

inline std::string ipusimBinary() { return std::string(binaryDir()) + "/bin/ipusim"; }
inline std::string sourcePath(const std::string& relative) { return std::string(IPUSIM_SOURCE_DIR) + "/" + relative; }

struct CommandResult {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line; `environment` is a prefix such as "A=1 B=2".
inline CommandResult runCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// Single-quotes a string for the shell.
inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `command` run under xvfb-run, the result's exit code the command's own:
// xvfb-run exits 5 when removing its temporary directory fails after the
// command ended (seen once under ASan in CI: a flake of the harness, not of
// the command under test).
inline CommandResult runHeadless(const std::string& command) {
  const std::string marker = "[headless exit ";
  CommandResult r = runCommand("xvfb-run -a -s '-screen 0 1600x900x24' sh -c " +
                               quote(command + "; echo \"" + marker + "$?]\""));
  const auto at = r.output.rfind(marker);
  if (at != std::string::npos) {
    r.exitCode = std::atoi(r.output.c_str() + at + marker.size());
    r.output.erase(at, r.output.find(']', at) + 1 - at);
  }
  return r;
}

// The environment prefix of a command line that writes every autoReport
// output into `dir` ("POPLAR_ENGINE_OPTIONS='{...}' "); `extra` adds options
// (",\"key\":\"value\"").
inline std::string autoReport(const std::filesystem::path& dir, const std::string& extra = "") {
  return "POPLAR_ENGINE_OPTIONS=" +
         quote("{\"autoReport.all\":\"true\",\"autoReport.directory\":\"" + dir.string() + "\"" + extra + "}") + " ";
}

// Every step's loss in a profile, in step order, as text with 17 significant
// digits (exact for a double); empty if the profile cannot be read.
inline std::vector<std::string> profileLosses(const std::filesystem::path& profile) {
  const CommandResult q = runCommand("sqlite3 " + quote(profile.string()) +
                                     " \"SELECT printf('%.17g', c.value) FROM counters c JOIN tracks t ON t.id = c.track_id"
                                     " WHERE t.kind = 'counter' AND t.name = 'loss' ORDER BY c.ts\"");
  std::vector<std::string> losses;
  if (q.exitCode != 0) return losses;
  std::string line;
  for (char c : q.output) {
    if (c != '\n') {
      line += c;
    } else if (!line.empty()) {
      losses.push_back(line);
      line.clear();
    }
  }
  if (!line.empty()) losses.push_back(line);
  return losses;
}

// A fresh scratch directory, removed with the object.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() / ("ipusim-" + tag + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace ipusim::test
