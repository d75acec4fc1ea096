#include "tests/fork_runner.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace ipusim::test {
namespace {

using Clock = std::chrono::steady_clock;

// GoogleTest's filter syntax: POSITIVE[-NEGATIVE], each a ':'-separated list
// of patterns with '*' and '?'; an empty positive part selects every test.
bool globMatches(const char* pattern, const char* name) {
  for (;; ++pattern, ++name) {
    if (*pattern == '*') {
      for (const char* rest = name;; ++rest) {
        if (globMatches(pattern + 1, rest)) return true;
        if (*rest == '\0') return false;
      }
    }
    if (*pattern == '\0') return *name == '\0';
    if (*name == '\0' || (*pattern != '?' && *pattern != *name)) return false;
  }
}

bool anyPatternMatches(const std::string& patterns, const std::string& name) {
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = patterns.find(':', begin);
    const std::string pattern = patterns.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (!pattern.empty() && globMatches(pattern.c_str(), name.c_str())) return true;
    if (end == std::string::npos) return false;
    begin = end + 1;
  }
}

bool filterSelects(const std::string& filter, const std::string& name) {
  const std::size_t dash = filter.find('-');
  const std::string positive = filter.substr(0, dash);
  const std::string negative = dash == std::string::npos ? "" : filter.substr(dash + 1);
  return anyPatternMatches(positive.empty() ? "*" : positive, name) && !anyPatternMatches(negative, name);
}

std::vector<std::string> selectedTests() {
  const std::string filter = GTEST_FLAG_GET(filter);
  const bool disabledToo = GTEST_FLAG_GET(also_run_disabled_tests);
  const auto* unit = testing::UnitTest::GetInstance();
  std::vector<std::string> names;
  for (int s = 0; s < unit->total_test_suite_count(); ++s) {
    const testing::TestSuite* suite = unit->GetTestSuite(s);
    for (int t = 0; t < suite->total_test_count(); ++t) {
      const testing::TestInfo* info = suite->GetTestInfo(t);
      const std::string name = std::string(info->test_suite_name()) + "." + info->name();
      const bool disabled = name.rfind("DISABLED_", 0) == 0 || name.find(".DISABLED_") != std::string::npos;
      if ((!disabled || disabledToo) && filterSelects(filter, name)) names.push_back(name);
    }
  }
  return names;
}

struct Child {
  pid_t pid;
  std::string test;
  std::FILE* output;  // the child's stdout and stderr
  Clock::time_point start;
};

volatile std::sig_atomic_t interrupted = 0;
void stopOnSignal(int) { interrupted = 1; }

// In the child: `test`, as `binary --gtest_filter=TEST`
// would run it, in the state an exec'd process starts in (default signal
// dispositions, no file descriptor of the runner's other children, none of
// the runner's memory: LeakSanitizer checks at the child's exit, and does not
// always see the runner's frames once a SystemC simulation has switched
// stacks; hence vectors, which hold no memory once emptied).
[[noreturn]] void runInChild(const std::string& test, std::vector<std::string>& tests, std::vector<Child>& running,
                             std::vector<std::string>& failed, std::FILE* output) {
  setpgid(0, 0);  // (a timed-out test is killed with whatever it started)
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  for (const Child& other : running) close(fileno(other.output));
  dup2(fileno(output), STDOUT_FILENO);
  dup2(fileno(output), STDERR_FILENO);
  fcntl(fileno(output), F_SETFD, FD_CLOEXEC);  // (what the test runs inherits stdout and stderr only)
  GTEST_FLAG_SET(filter, test);
  std::vector<std::string>().swap(tests);
  std::vector<Child>().swap(running);
  std::vector<std::string>().swap(failed);
  int status = RUN_ALL_TESTS();
  if (testing::UnitTest::GetInstance()->test_to_run_count() != 1) {
    std::fprintf(stderr, "%s: the filter selected %d tests in the child, not 1\n", GTEST_FLAG_GET(filter).c_str(),
                 testing::UnitTest::GetInstance()->test_to_run_count());
    status = 1;
  }
  std::fflush(nullptr);
  std::exit(status);  // (exit, not _exit: LeakSanitizer checks at exit)
}

void printOutput(std::FILE* output) {
  std::rewind(output);
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, output)) > 0) std::fwrite(buffer, 1, n, stdout);
}

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

int runEachTestForked(const ForkEachOptions& options) {
  std::vector<std::string> tests = selectedTests();
  std::size_t next = 0;  // the next test to start
  const std::size_t total = tests.size();
  if (total == 0) {
    std::fprintf(stderr, "no test ran: the filter selected nothing\n");
    return 1;
  }
  std::signal(SIGINT, stopOnSignal);
  std::signal(SIGTERM, stopOnSignal);
  const unsigned jobs = options.jobs == 0 ? 1 : options.jobs;
  std::vector<Child> running;
  std::vector<std::string> failed;
  std::size_t finished = 0;
  const Clock::time_point runStart = Clock::now();
  while ((next < total || !running.empty()) && !interrupted) {
    while (next < total && running.size() < jobs) {
      std::FILE* output = std::tmpfile();
      if (output == nullptr) {
        std::perror("tmpfile");
        return 1;
      }
      std::fflush(nullptr);  // (or the child writes this process's buffered output again)
      const pid_t pid = fork();
      if (pid < 0) {
        std::perror("fork");
        return 1;
      }
      if (pid == 0) runInChild(tests[next], tests, running, failed, output);
      setpgid(pid, pid);  // (as the child does: whichever runs first)
      running.push_back({pid, tests[next], output, Clock::now()});
      ++next;
    }
    int status = 0;
    const pid_t done = waitpid(-1, &status, WNOHANG);
    const Clock::time_point now = Clock::now();
    for (auto child = running.begin(); child != running.end();) {
      const double seconds = std::chrono::duration<double>(now - child->start).count();
      const bool exited = child->pid == done;
      const bool timedOut = !exited && seconds > options.timeoutSeconds;
      if (!exited && !timedOut) {
        ++child;
        continue;
      }
      int childStatus = status;
      if (timedOut) {
        kill(-child->pid, SIGKILL);
        waitpid(child->pid, &childStatus, 0);
      }
      ++finished;
      const bool passed = !timedOut && WIFEXITED(childStatus) && WEXITSTATUS(childStatus) == 0;
      if (!passed) {
        printOutput(child->output);
        failed.push_back(child->test);
      }
      const std::string verdict =
          passed ? "Passed" : timedOut ? "Timeout" : "Failed (" + describeStatus(childStatus) + ")";
      std::printf("%zu/%zu %s ... %s %.2f sec\n", finished, total, child->test.c_str(), verdict.c_str(), seconds);
      std::fflush(stdout);
      std::fclose(child->output);
      child = running.erase(child);
    }
    if (done == 0) usleep(2000);
  }
  if (interrupted) {
    for (const Child& child : running) kill(-child.pid, SIGKILL);
    for (const Child& child : running) waitpid(child.pid, nullptr, 0);
    std::fprintf(stderr, "interrupted: %zu of %zu tests finished\n", finished, total);
    return 1;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - runStart).count();
  std::printf("%zu tests, %zu failed, in %.1f s\n", total, failed.size(), seconds);
  for (const std::string& name : failed) std::printf("  failed: %s\n", name.c_str());
  return failed.empty() ? 0 : 1;
}

}  // namespace ipusim::test
