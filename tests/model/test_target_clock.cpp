// Kernel time: one device cycle is one nanosecond of SystemC time.
#include "model/clock.hpp"

#include <gtest/gtest.h>

namespace test_target_clock {

using namespace ipusim::model;

TEST(TargetClock, ConfiguresOneNanosecondResolutionOnce) {
  configureKernelTime();
  configureKernelTime();  // a second call is harmless
  EXPECT_EQ(sc_core::sc_get_time_resolution(), sc_core::sc_time(1, sc_core::SC_NS));
  EXPECT_EQ(kTicksPerCycle(), 1u);
  EXPECT_EQ(cyclesToTime(1330), sc_core::sc_time(1330, sc_core::SC_NS));
}

TEST(TargetClock, TicksFollowAResolutionFixedEarlier) {
  // An sc_time made before configureKernelTime fixes the default 1 ps
  // resolution; cycles are still whole (1000 ticks each).
  const sc_core::sc_time early(5, sc_core::SC_NS);
  configureKernelTime();
  EXPECT_EQ(kTicksPerCycle(), 1000u);
  EXPECT_EQ(cyclesToTime(7), sc_core::sc_time(7, sc_core::SC_NS));
  EXPECT_EQ(early.value(), 5000u);
}

}  // namespace test_target_clock
