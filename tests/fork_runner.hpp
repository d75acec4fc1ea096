#pragma once
// Every selected test in a child process forked from this one.
//
// ctest runs each test in a process of its own (SystemC elaborates once per
// process), and under the sanitizers a test binary's start-up, not the test,
// is most of a short test's time: loading and relocating an instrumented
// binary of 100 MB, registering its globals with ASan, its static
// initializers. A child forked from a binary that has started once but run
// nothing (no SystemC simulation, no test) is the same clean process without
// that cost; its own exit still runs LeakSanitizer's check. .ci/sanitize runs
// the suite so: `ipusim_<folder>_tests --ipusim_fork_each=JOBS
// [--ipusim_test_timeout=SECONDS] [--gtest_filter=...]`.
namespace ipusim::test {

struct ForkEachOptions {
  unsigned jobs = 2;               // children running at once
  unsigned timeoutSeconds = 600;   // as ctest's TIMEOUT for the suite's tests
};

// Runs each test GoogleTest's flags select (--gtest_filter,
// --gtest_also_run_disabled_tests) alone in a forked child, `jobs` at a time;
// prints one line a test and a failed test's output, as ctest
// --output-on-failure does. Returns the exit status: 0 when at least one test
// ran and every test passed.
int runEachTestForked(const ForkEachOptions& options);

}  // namespace ipusim::test
