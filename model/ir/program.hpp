#pragma once
// Programs: a Poplar-shaped control tree stored flat (children by id).
#include "model/ir/types.hpp"

#include <vector>

namespace ipusim::ir {

enum class ProgramKind : std::uint8_t {
  Sequence,         // run children in order
  Execute,          // run compute set `computeSet` (compute phase, then sync)
  Copy,             // exchange: `src` elements to `dst` elements (same count)
  StreamCopy,       // host stream `stream` <-> tensor region `tensor`
  Repeat,           // run children[0] `count` times
  RepeatWhileTrue,  // run children[0] (the condition program), then while `condition`
                    // (a Bool/Int scalar) is non-zero run children[1] and children[0] again
  If,               // `condition` non-zero: children[0], else children[1] (if present)
  Sync,             // an explicit sync of `syncType`
  Call,             // run program `callee`
};

enum class SyncType : std::uint8_t { Internal, External };

const char* toString(ProgramKind kind);
ProgramKind programKindFromString(const std::string& name);  // throws std::invalid_argument
const char* toString(SyncType type);

struct Program {
  Id id = kNoId;
  ProgramKind kind = ProgramKind::Sequence;
  std::string name;             // shown in the profile's program tree and slices
  std::vector<Id> children;
  Id computeSet = kNoId;        // Execute
  TensorRef src, dst;           // Copy
  Id stream = kNoId;            // StreamCopy
  TensorRef tensor;             // StreamCopy: destination (HostToDevice) or source
  std::uint64_t count = 0;      // Repeat
  TensorRef condition;          // RepeatWhileTrue, If
  SyncType syncType = SyncType::Internal;  // Sync
  Id callee = kNoId;            // Call
  bool marksStep = false;       // each execution of this program is one training step
  DebugInfo debug;
};

}  // namespace ipusim::ir
