#include "profiler/analysis/text_format.hpp"

#include <cmath>
#include <cstdio>

namespace ipusim::profiler::analysis {

std::string formatNumber(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string formatPercent(double fraction) {
  if (std::isnan(fraction)) return "n/a";  // (a share of nothing: HostWaitBreakdown::share)
  return formatNumber(fraction * 100.0, 1) + "%";
}

std::string formatSeconds(double seconds) {
  const double magnitude = std::fabs(seconds);
  if (magnitude >= 1.0 || magnitude == 0.0) return formatNumber(seconds, 3) + " s";
  if (magnitude >= 1e-3) return formatNumber(seconds * 1e3, 3) + " ms";
  return formatNumber(seconds * 1e6, 3) + " us";
}

std::string formatBytes(std::int64_t bytes) {
  const double b = double(bytes);
  std::string scaled;
  if (b >= 1024.0 * 1024.0 * 1024.0) scaled = formatNumber(b / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
  else if (b >= 1024.0 * 1024.0) scaled = formatNumber(b / (1024.0 * 1024.0), 2) + " MiB";
  else if (b >= 1024.0) scaled = formatNumber(b / 1024.0, 1) + " KiB";
  else return std::to_string(bytes) + " B";
  return scaled + " (" + std::to_string(bytes) + " B)";
}

}  // namespace ipusim::profiler::analysis
