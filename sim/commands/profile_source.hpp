#pragma once
// The profile a command reads: `path`, or the combination of the instance
// profiles in it (profiler/analysis/instance_profiles.hpp), with a progress
// bar on a terminal while they are combined (a POD256's 16 profiles take
// about half a minute).
#include "profiler/analysis/instance_profiles.hpp"
#include "sim/cli/progress_bar.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace ipusim::sim {

// A progress bar for combining instance profiles, drawn from the first step on (the bar ends its line when the
// last copy of the returned function is gone).
inline profiler::analysis::CombineProgress combineProgressBar() {
  auto bar = std::make_shared<std::unique_ptr<ProgressBar>>();
  return [bar](std::uint64_t done, std::uint64_t total) {
    if (!*bar) *bar = std::make_unique<ProgressBar>("combining the instance profiles", total);
    (*bar)->update(done);
  };
}

inline profiler::analysis::ProfileSource openProfileSource(const std::string& path) {
  return profiler::analysis::ProfileSource(path, combineProgressBar());
}

}  // namespace ipusim::sim
