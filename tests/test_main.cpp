// The one main() of every ipusim test binary.
//
// libsystemc.so defines main() (it calls sc_main), so a test binary linked
// with gtest_main may silently pick SystemC's and run zero tests. We link
// GTest::gtest only, define main() here, and fail when no test was selected:
// a filter that matches nothing must not look like success.
#include <gtest/gtest.h>
#include <systemc>

#include <cstdio>
#include <cstdlib>

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
