#pragma once
// The profile a command reads: `path`, or the combination of the instance
// profiles in it (profiler/analysis/instance_profiles.hpp), with a progress
// bar on a terminal while they are combined (a POD256's 16 profiles take
// about half a minute).
#include "profiler/analysis/instance_profiles.hpp"
#include "sim/cli/progress_bar.hpp"

#include <memory>
#include <string>

namespace ipusim::sim {

inline profiler::analysis::ProfileSource openProfileSource(const std::string& path) {
  std::unique_ptr<ProgressBar> bar;
  return profiler::analysis::ProfileSource(path, [&](std::uint64_t done, std::uint64_t total) {
    if (!bar) bar = std::make_unique<ProgressBar>("combining the instance profiles", total);
    bar->update(done);
  });
}

}  // namespace ipusim::sim
