#pragma once
// TimeAxis: maps device cycles to horizontal pixels and back, and implements
// the navigation gestures (zoom around a point, pan, fit). Pure arithmetic:
// the shell feeds it mouse and keyboard input, the tests feed it numbers.
#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::viewer {

class TimeAxis {
 public:
  TimeAxis() = default;
  // Shows [from, to) across `widthPx` pixels.
  TimeAxis(double from, double to, double widthPx);

  double startCycle() const { return start_; }
  double endCycle() const { return start_ + cyclesPerPixel_ * width_; }
  double cyclesPerPixel() const { return cyclesPerPixel_; }
  double widthPx() const { return width_; }

  double pixelOf(double cycle) const { return (cycle - start_) / cyclesPerPixel_; }
  double cycleAt(double px) const { return start_ + px * cyclesPerPixel_; }

  // Keeps the current start and scale; only the width changes.
  void setWidth(double widthPx);
  void fit(double from, double to);
  // factor > 1 zooms in; the cycle under `anchorPx` stays under it.
  void zoomAround(double anchorPx, double factor);
  void panPixels(double dx);
  // Keeps the view inside [lo, hi] (with the whole range visible at most).
  void clampTo(double lo, double hi);

 private:
  double start_ = 0, cyclesPerPixel_ = 1, width_ = 1;
};

struct AxisTick {
  double cycle;
  std::string label;
};

// Round-numbered ticks (1, 2, 5 x 10^k cycles) at least `minSpacingPx` apart.
std::vector<AxisTick> axisTicks(const TimeAxis& axis, double minSpacingPx);

// "12,345,678" style cycle counts; "1.23 ms" style durations at `clockHz`.
std::string formatCycles(std::int64_t cycles);
std::string formatSeconds(double seconds);
std::string formatCyclesWithTime(std::int64_t cycles, double clockHz);

}  // namespace ipusim::viewer
