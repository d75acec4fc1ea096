#pragma once
// ProgramSummary: the shape of a profile's program tree (programs table).
#include "traces/profile_rows.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::profiler::analysis {

struct ProgramRoot {
  std::int64_t id = 0;
  std::string kind, name;
  std::int64_t steps = 0;   // programs in its subtree, itself included
};

struct ProgramSummary {
  std::int64_t programs = 0;
  std::int64_t maxDepth = 0;                  // a root has depth 0
  std::map<std::string, std::int64_t> byKind; // Execute, StreamCopy, ...
  std::vector<ProgramRoot> roots;             // in id order
};

// `programs` form a tree, as ProfileReader verified (SCHEMA.md check 7):
// throws std::logic_error when a parent id names no program or the parent
// links form a cycle.
ProgramSummary summarizePrograms(const std::vector<traces::ProgramRow>& programs);

}  // namespace ipusim::profiler::analysis
