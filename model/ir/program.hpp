#pragma once
// Programs: a Poplar-shaped control tree stored flat (children by id).
#include "model/ir/types.hpp"

#include <vector>

namespace ipusim::ir {

enum class ProgramKind : std::uint8_t {
  Sequence,         // run children in order
  Execute,          // run compute set `computeSet` (compute phase, then sync)
  Copy,             // exchange: `src` elements to `dst` elements (same count), or
                    // every pair of `regions` (when non-empty) in ONE exchange phase
  StreamCopy,       // host stream `stream` <-> tensor region `tensor`
  Repeat,           // run children[0] `count` times
  RepeatWhileTrue,  // run children[0] (the condition program), then while `condition`
                    // (a Bool/Int scalar) is non-zero run children[1] and children[0] again
  If,               // `condition` non-zero: children[0], else children[1] (if present)
  Sync,             // an explicit sync of `syncType`
  Call,             // run program `callee`
  RemoteCopy,       // remote buffer `remoteBuffer` <-> tensor region `tensor`
                    // (`remoteStore`: tensor -> buffer; else buffer -> tensor)
};

enum class SyncType : std::uint8_t { Internal, External };

const char* toString(ProgramKind kind);
ProgramKind programKindFromString(const std::string& name);  // throws std::invalid_argument
const char* toString(SyncType type);

// One region pair of a multi-region Copy: `src` elements to `dst` elements
// (same count and dtype). Poplar's exchange moves arbitrary regions of tensors
// in one phase; that is how operands are gathered into contiguous tile-local
// buffers. All regions of one Copy are read before any is written, so a
// destination must not overlap any source of the same Copy (validate checks).
//
// A region may also be 2-D: `rows` rows of src.size() elements, row r read
// from src shifted by r x srcStride and written to dst shifted by
// r x dstStride (a block of a row-major matrix). It is the same exchange as
// its rows listed one by one (copyRegions() expands it), written compactly:
// gathering a matmul's operand blocks takes one such region per tile instead
// of one per row.
struct CopyRegion {
  TensorRef src, dst;  // row 0
  std::uint64_t rows = 1;
  std::uint64_t srcStride = 0, dstStride = 0;  // elements between rows (rows > 1)
  bool operator==(const CopyRegion& o) const {
    return src == o.src && dst == o.dst && rows == o.rows && srcStride == o.srcStride && dstStride == o.dstStride;
  }
  std::uint64_t elements() const { return src.size() * rows; }
};

// An Execute's tensor rename: the compute set's fields on tensor `from` read
// and write tensor `to` instead (see Program::renames).
struct TensorRename {
  Id from = kNoId, to = kNoId;
  bool operator==(const TensorRename& o) const { return from == o.from && to == o.to; }
};

struct Program {
  Id id = kNoId;
  ProgramKind kind = ProgramKind::Sequence;
  std::string name;             // shown in the profile's program tree and slices
  std::vector<Id> children;
  Id computeSet = kNoId;        // Execute
  // Execute, and Copy with `copyOf`: the work run on other tensors, each
  // rename's `from` read as its `to` (sorted by `from`, each once; `to` laid
  // out as `from` tile by tile, which validate checks). A pipeline's stage is
  // laid out once and each mini-batch's pass runs it on that mini-batch's
  // tensors, as Poplar compiles a stage once and moves each mini-batch's data
  // through it: the vertices, the exchanges and their code exist once,
  // however many mini-batches run (model/ir/renames.hpp).
  std::vector<TensorRename> renames;
  Id copyOf = kNoId;            // Copy: moves Copy `copyOf`'s regions (it holds none), renamed
  TensorRef src, dst;           // Copy with one region (when `regions` is empty)
  std::vector<CopyRegion> regions;  // Copy with several regions; when non-empty, src/dst are unused
  Id stream = kNoId;            // StreamCopy
  TensorRef tensor;             // StreamCopy: destination (HostToDevice) or source; RemoteCopy: the same
  std::uint64_t count = 0;      // Repeat
  TensorRef condition;          // RepeatWhileTrue, If
  SyncType syncType = SyncType::Internal;  // Sync
  Id callee = kNoId;            // Call
  Id remoteBuffer = kNoId;      // RemoteCopy (and `tensor`: the tile side)
  bool remoteStore = false;     // RemoteCopy: true tensor -> buffer, false buffer -> tensor
  bool marksStep = false;       // each execution of this program is one training step
  // A step of a cross-replica collective (the gradient all-reduce: its syncs,
  // exchanges and additions): its BSP phases are profiled as category
  // "collective", apart from point-to-point IPU-Link copies.
  bool collective = false;
  // A Sequence whose children (Execute and Copy only) run on each IPU's own
  // clock, as Poplar runs every IPU's program between the syncs that join
  // IPUs: a phase waits only for the IPUs it involves, and the Sequence ends
  // when its IPUs meet (a pipeline slot: its passes side by side; see
  // model/README.md, "IPUs apart").
  bool ipusApart = false;
  DebugInfo debug;
};

// The tensor a renaming program's work on `tensor` touches: its rename, or itself.
Id renamedTensor(const Program& program, Id tensor);

// The region pairs a Copy holding its regions moves, each 2-D region
// expanded into its rows: `regions`, or {src, dst} when it is empty (a Copy
// with copyOf: std::logic_error; see renames.hpp).
std::vector<CopyRegion> copyRegions(const Program& copy);
// The rows of one region as 1-D regions, appended to `out`.
void expandRegion(const CopyRegion& region, std::vector<CopyRegion>& out);

}  // namespace ipusim::ir
