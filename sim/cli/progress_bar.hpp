#pragma once
// A one-line progress bar on stderr, drawn only when stderr is a terminal and
// at most ten times a second (redrawing costs more than a simulated step).
#include <chrono>
#include <cstdint>
#include <string>

namespace ipusim::sim {

class ProgressBar {
 public:
  ProgressBar(std::string label, std::uint64_t total);
  ~ProgressBar();  // finishes the line
  void update(std::uint64_t done, const std::string& detail = "");
  bool enabled() const { return enabled_; }

 private:
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point lastDraw_{};
};

}  // namespace ipusim::sim
