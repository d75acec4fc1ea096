#pragma once
// Small text formatting helpers shared by the printed reports.
#include <cstdint>
#include <string>

namespace ipusim::profiler::analysis {

std::string formatPercent(double fraction);       // "12.3%"; "n/a" for NaN (nothing measured)
std::string formatSeconds(double seconds);        // "1.234 s", "12.3 ms", "4.56 us"
std::string formatBytes(std::int64_t bytes);      // "1.5 MiB (1572864 B)"
std::string formatNumber(double value, int decimals);

}  // namespace ipusim::profiler::analysis
