#include "profiler/analysis/chrome_trace_time.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace ipusim::profiler::analysis {

namespace {

// round(cycles * perSecond / clockHz), halves away from zero.
std::int64_t scaledRound(std::int64_t cycles, std::int64_t perSecond, double clockHz, const char* unit) {
  if (!(clockHz > 0) || !std::isfinite(clockHz))
    throw std::range_error("clock_hz " + std::to_string(clockHz) + " is not a positive frequency");
  auto doesNotFit = [&] {
    return std::range_error(std::to_string(cycles) + " cycles at clock_hz " + std::to_string(clockHz) +
                            " do not fit the trace's 64-bit " + unit);
  };
  if (clockHz == std::floor(clockHz) && clockHz < 9.0e18) {
    const __int128 hz = static_cast<__int128>(clockHz);
    const __int128 scaled = static_cast<__int128>(cycles) * perSecond;
    const __int128 magnitude = scaled < 0 ? -scaled : scaled;
    const __int128 rounded = (2 * magnitude + hz) / (2 * hz);
    const __int128 result = scaled < 0 ? -rounded : rounded;
    if (result > std::numeric_limits<std::int64_t>::max() || result < std::numeric_limits<std::int64_t>::min())
      throw doesNotFit();
    return static_cast<std::int64_t>(result);
  }
  const long double result =
      static_cast<long double>(cycles) * static_cast<long double>(perSecond) / static_cast<long double>(clockHz);
  if (!(std::fabs(result) < 9.2e18L)) throw doesNotFit();
  return std::llroundl(result);
}

}  // namespace

std::int64_t cyclesToTraceUnits(std::int64_t cycles, double clockHz) {
  return scaledRound(cycles, kTraceUnitsPerMicrosecond * 1000000, clockHz, "trace units");
}

std::int64_t cyclesToNanoseconds(std::int64_t cycles, double clockHz) {
  return scaledRound(cycles, 1000000000, clockHz, "nanoseconds");
}

std::string traceUnitsAsMicroseconds(std::int64_t units) {
  static_assert(kTraceUnitsPerMicrosecond == 4096, "the fraction below is written for 2^-12");
  // Unsigned: the magnitude of INT64_MIN does not fit int64.
  const std::uint64_t magnitude =
      units < 0 ? 0 - static_cast<std::uint64_t>(units) : static_cast<std::uint64_t>(units);
  char buffer[64];
  int n = std::snprintf(buffer, sizeof buffer, "%s%llu", units < 0 ? "-" : "",
                        static_cast<unsigned long long>(magnitude >> 12));
  if (const std::uint64_t fraction = magnitude & 4095) {
    // fraction / 2^12 = fraction * 5^12 / 10^12: 12 exact decimals.
    n += std::snprintf(buffer + n, sizeof buffer - n, ".%012llu",
                       static_cast<unsigned long long>(fraction * 244140625ULL));
    while (buffer[n - 1] == '0') buffer[--n] = '\0';
  }
  return std::string(buffer, n);
}

}  // namespace ipusim::profiler::analysis
