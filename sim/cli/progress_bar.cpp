#include "sim/cli/progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

namespace ipusim::sim {

ProgressBar::ProgressBar(std::string label, std::uint64_t total, std::FILE* out)
    : label_(std::move(label)), total_(total), out_(out), enabled_(isatty(fileno(out)) == 1 && total > 0) {}

ProgressBar::~ProgressBar() {
  if (drawn_) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

void ProgressBar::update(std::uint64_t done, const std::string& detail) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total_ && drawn_ && now - lastDraw_ < std::chrono::milliseconds(100)) return;
  lastDraw_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total_);
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(out_, "\r%s [%s] %llu/%llu %s\x1b[K", label_.c_str(), bar.c_str(), (unsigned long long)done,
               (unsigned long long)total_, detail.c_str());
  std::fflush(out_);
}

}  // namespace ipusim::sim
