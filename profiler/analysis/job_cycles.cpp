#include "profiler/analysis/job_cycles.hpp"

#include "traces/profile_error.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace ipusim::profiler::analysis {

std::int64_t jobCycles(const traces::ProfileReader& reader) {
  const std::string text = reader.metaValue("job_end_cycle");
  return jobCycles(text, text.empty() ? reader.runs() : std::vector<traces::RunRow>{}, reader.path());
}

std::int64_t jobCycles(const std::string& text, const std::vector<traces::RunRow>& runs, const std::string& path) {
  if (!text.empty()) {
    const bool digits = text.size() <= 18 && std::all_of(text.begin(), text.end(), [](unsigned char c) {
      return std::isdigit(c) != 0;
    });
    if (!digits)
      throw traces::ProfileError(path + ": meta job_end_cycle is '" + text +
                                 "'; expected a non-negative integer (cycles)");
    return std::stoll(text);
  }
  std::int64_t end = 0;
  for (const auto& run : runs) end = std::max(end, run.endCycle);
  return end;
}

}  // namespace ipusim::profiler::analysis
