#pragma once
// A one-line progress bar on stderr (or another stream: a rank of mpirun,
// whose stderr is a pipe, draws on mpirun's terminal), drawn only when the
// stream is a terminal and at most ten times a second (redrawing costs more
// than a simulated step).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ipusim::sim {

class ProgressBar {
 public:
  ProgressBar(std::string label, std::uint64_t total, std::FILE* out = stderr);
  ~ProgressBar();  // finishes the line
  void update(std::uint64_t done, const std::string& detail = "");
  bool enabled() const { return enabled_; }
  std::FILE* stream() const { return out_; }

 private:
  std::string label_;
  std::uint64_t total_;
  std::FILE* out_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point lastDraw_{};
};

}  // namespace ipusim::sim
