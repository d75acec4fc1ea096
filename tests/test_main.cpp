// The one main() of every ipusim test binary.
//
// libsystemc.so defines main() (it calls sc_main), so a test binary linked
// with gtest_main may silently pick SystemC's and run zero tests. We link
// GTest::gtest only, define main() here, and fail when no test was selected:
// a filter that matches nothing must not look like success.
//
// --ipusim_fork_each=JOBS runs each selected test in a child forked from
// this process instead (tests/fork_runner.hpp; .ci/sanitize),
// --ipusim_test_timeout=SECONDS bounding each.
#include "tests/fork_runner.hpp"
#include "tests/test_build.hpp"

#include <gtest/gtest.h>
#include <systemc>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

// This build's, from its own compile: the tests' objects may come from another build (tests/test_build.hpp).
const char* ipusim::test::binaryDir() { return IPUSIM_BINARY_DIR; }
bool ipusim::test::sanitizedBuild() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#else
  return false;
#endif
}

// Never called: SystemC's library refers to it, our main() replaces its main().
int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  testing::InitGoogleTest(&argc, argv);
  std::optional<ipusim::test::ForkEachOptions> forkEach;
  for (int i = 1; i < argc; ++i) {  // (what InitGoogleTest left: not its own flags)
    const std::string arg = argv[i];
    const auto value = [&](const char* prefix) -> std::optional<unsigned> {
      if (arg.rfind(prefix, 0) != 0) return std::nullopt;
      const std::string text = arg.substr(std::strlen(prefix));
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 6) {
        std::fprintf(stderr, "%s: expected a whole number after %s\n", arg.c_str(), prefix);
        std::exit(2);
      }
      return static_cast<unsigned>(std::stoul(text));
    };
    if (auto jobs = value("--ipusim_fork_each=")) {
      if (!forkEach) forkEach.emplace();
      forkEach->jobs = *jobs;
    } else if (auto seconds = value("--ipusim_test_timeout=")) {
      if (!forkEach) forkEach.emplace();
      forkEach->timeoutSeconds = *seconds;
    }
  }
  if (forkEach && !testing::GTEST_FLAG(list_tests)) return ipusim::test::runEachTestForked(*forkEach);
  const int status = RUN_ALL_TESTS();
  const auto* unit = testing::UnitTest::GetInstance();
  bool listing = testing::GTEST_FLAG(list_tests);
  if (!listing && unit->test_to_run_count() == 0) {
    std::fprintf(stderr, "no test ran: the filter selected nothing\n");
    return 1;
  }
  return status;
}
