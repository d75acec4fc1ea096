// The one main() of every ipusim test binary.
//
// libsystemc.so defines main() (it calls sc_main), so a test binary linked
// with gtest_main may silently pick SystemC's and run zero tests. We link
// GTest::gtest only, define main() here, and fail when no test was selected:
// a filter that matches nothing must not look like success.
#include "tests/test_build.hpp"

#include <gtest/gtest.h>
#include <systemc>

#include <cstdio>
#include <cstdlib>

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
  const int status = RUN_ALL_TESTS();
  const auto* unit = testing::UnitTest::GetInstance();
  bool listing = testing::GTEST_FLAG(list_tests);
  if (!listing && unit->test_to_run_count() == 0) {
    std::fprintf(stderr, "no test ran: the filter selected nothing\n");
    return 1;
  }
  return status;
}
