#pragma once
// Liveness of an executable's tensors in program order, derived from the
// executable the engine runs (not from compiler internals), by the rule the
// memory planner uses: an always-live tensor is live all the time; a
// not-always-live one from its first to its last use in program order.
//
// Program order of an entry point: its tree walked depth-first — Sequence
// children in order, Repeat's body once, RepeatWhileTrue's condition then
// body, If's branches in order, Call's callee — numbering each leaf step
// (Execute, Copy, StreamCopy, Sync) the first time it is reached. Uses of a
// tensor: the vertex fields of an Execute's compute set, the regions of a
// Copy, the tensor of a StreamCopy.
#include "model/ir/executable.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::profiler {

struct ProgramLiveness {
  std::vector<ir::Id> order;  // leaf program ids by position
  struct Lifetime { ir::Id tensor; std::uint64_t first, last; };
  std::vector<Lifetime> lifetimes;  // tensors used at least once, by tensor id
};

// Throws std::invalid_argument when the entry point's tree refers to a
// program, compute set or tensor that does not exist.
ProgramLiveness programLiveness(const ir::Executable& exe, ir::Id entryProgram);

}  // namespace ipusim::profiler
