#pragma once
// Times of the trace exports, from device cycles.
//
// Chrome Trace Event JSON times are microseconds as doubles in every
// consumer, which adds ts + dur, subtracts the first timestamp of a thread
// (speedscope) and compares the results. Decimal microseconds are not exact
// doubles, so a child could end an ulp after its parent or its next sibling
// began. The JSON's times are therefore binary fractions: whole multiples of
// 2^-12 us (0.244 ns), written exactly in decimal. Below 2^41 us (25 days)
// every such time, and every sum and difference of two, is an exact double:
// nesting in cycles is nesting in any consumer's arithmetic, and a duration
// read back converts to the exact cycles (round(dur_us * clock_hz / 1e6))
// for clocks below 2.04 GHz (twice the grid is under half a cycle).
//
// Perfetto's protobuf times are integer nanoseconds.
#include <cstdint>
#include <string>

namespace ipusim::profiler::analysis {

// Units of the JSON's times per microsecond.
inline constexpr std::int64_t kTraceUnitsPerMicrosecond = 4096;

// round(cycles * kTraceUnitsPerMicrosecond * 1e6 / clock_hz), halves away
// from zero: the JSON time of a cycle in 2^-12 us. Monotonic in cycles.
std::int64_t cyclesToTraceUnits(std::int64_t cycles, double clockHz);

// round(cycles * 1e9 / clock_hz), halves away from zero. Monotonic.
std::int64_t cyclesToNanoseconds(std::int64_t cycles, double clockHz);

// Both compute exactly in integers when clock_hz is a whole number of Hz
// (every preset), else in long double, and throw std::range_error for a
// clock_hz that is not a positive finite frequency or a result beyond int64.

// Trace units as exact decimal microseconds ("906.557861328125", "1").
std::string traceUnitsAsMicroseconds(std::int64_t units);

}  // namespace ipusim::profiler::analysis
