#include "profiler/analysis/program_summary.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace ipusim::profiler::analysis {

ProgramSummary summarizePrograms(const std::vector<traces::ProgramRow>& programs) {
  ProgramSummary s;
  s.programs = static_cast<std::int64_t>(programs.size());
  std::unordered_map<std::int64_t, const traces::ProgramRow*> byId;
  for (const auto& p : programs) {
    byId[p.id] = &p;
    ++s.byKind[p.kind];
  }
  std::unordered_map<std::int64_t, std::int64_t> subtree;  // root id -> programs below it
  for (const auto& p : programs) {
    // Walk up to the root: depth and the root this program belongs to.
    const traces::ProgramRow* node = &p;
    std::int64_t depth = 0;
    while (node->parentId >= 0) {
      auto it = byId.find(node->parentId);
      if (it == byId.end())
        throw std::logic_error("program " + std::to_string(node->id) + " has parent_id " +
                                    std::to_string(node->parentId) + ", which names no program");
      node = it->second;
      if (++depth > s.programs)
        throw std::logic_error("program " + std::to_string(p.id) +
                                    ": parent_id links form a cycle");
    }
    s.maxDepth = std::max(s.maxDepth, depth);
    ++subtree[node->id];
  }
  for (const auto& p : programs)
    if (p.parentId < 0) s.roots.push_back({p.id, p.kind, p.name, subtree[p.id]});
  std::sort(s.roots.begin(), s.roots.end(),
            [](const ProgramRoot& a, const ProgramRoot& b) { return a.id < b.id; });
  return s;
}

}  // namespace ipusim::profiler::analysis
