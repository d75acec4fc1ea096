#include "viewer/core/time_axis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ipusim::viewer {

namespace {
// Below this the view would show less than one cycle per 1/64 pixel.
constexpr double kMinCyclesPerPixel = 1.0 / 64;
}

TimeAxis::TimeAxis(double from, double to, double widthPx) {
  width_ = std::max(1.0, widthPx);
  fit(from, to);
}

void TimeAxis::setWidth(double widthPx) { width_ = std::max(1.0, widthPx); }

void TimeAxis::fit(double from, double to) {
  if (to <= from) to = from + 1;
  start_ = from;
  cyclesPerPixel_ = std::max(kMinCyclesPerPixel, (to - from) / width_);
}

void TimeAxis::zoomAround(double anchorPx, double factor) {
  if (factor <= 0) return;
  const double anchor = cycleAt(anchorPx);
  cyclesPerPixel_ = std::max(kMinCyclesPerPixel, cyclesPerPixel_ / factor);
  start_ = anchor - anchorPx * cyclesPerPixel_;
}

void TimeAxis::panPixels(double dx) { start_ -= dx * cyclesPerPixel_; }

void TimeAxis::clampTo(double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0) return;
  const double margin = span * 0.05;
  if (cyclesPerPixel_ * width_ > span + 2 * margin) fit(lo - margin, hi + margin);
  const double visible = cyclesPerPixel_ * width_;
  start_ = std::clamp(start_, lo - margin, std::max(lo - margin, hi + margin - visible));
}

std::string formatCycles(std::int64_t cycles) {
  std::string digits = std::to_string(cycles < 0 ? -cycles : cycles);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return cycles < 0 ? "-" + out : out;
}

std::string formatSeconds(double seconds) {
  char buffer[64];
  if (seconds == 0) return "0 s";  // also -0.0
  const double a = std::fabs(seconds);
  if (a >= 1) std::snprintf(buffer, sizeof buffer, "%.3f s", seconds);
  else if (a >= 1e-3) std::snprintf(buffer, sizeof buffer, "%.3f ms", seconds * 1e3);
  else if (a >= 1e-6) std::snprintf(buffer, sizeof buffer, "%.3f us", seconds * 1e6);
  else std::snprintf(buffer, sizeof buffer, "%.1f ns", seconds * 1e9);
  return buffer;
}

std::string formatCyclesWithTime(std::int64_t cycles, double clockHz) {
  std::string text = formatCycles(cycles) + " cycles";
  if (clockHz > 0) text += " (" + formatSeconds(static_cast<double>(cycles) / clockHz) + ")";
  return text;
}

std::vector<AxisTick> axisTicks(const TimeAxis& axis, double minSpacingPx) {
  std::vector<AxisTick> ticks;
  const double minStep = std::max(1.0, minSpacingPx * axis.cyclesPerPixel());
  double step = std::pow(10.0, std::floor(std::log10(minStep)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (step * m >= minStep) {
      step *= m;
      break;
    }
  }
  const double first = std::ceil(axis.startCycle() / step) * step;
  for (double c = first; c <= axis.endCycle() && ticks.size() < 1000; c += step)
    ticks.push_back({c, formatCycles(static_cast<std::int64_t>(std::llround(c)))});
  return ticks;
}

}  // namespace ipusim::viewer
