#pragma once
// The executable: everything the model needs to run a compiled graph, and
// what `serialized_graph.json` holds. Entry programs are run by index with
// Engine::run(i), as in Poplar.
#include "model/ir/compute_set.hpp"
#include "model/ir/fused_matmul.hpp"
#include "model/ir/program.hpp"
#include "model/ir/remote_buffer.hpp"
#include "model/ir/replica_mirror.hpp"
#include "model/ir/stream.hpp"
#include "model/ir/tensor.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>

namespace ipusim::ir {

struct EntryPoint {
  std::string name;  // "train", "init", ...
  Id program = kNoId;
};

// Programs nest at most this deep (Sequence in Repeat in ...): the bundled
// executables nest under 10 levels; the model walks the tree recursively on
// a SystemC thread's fixed stack (design choice, far below what it holds).
inline constexpr std::size_t kMaxProgramDepth = 100;

struct Executable {
  std::string name;        // workload or graph name
  nlohmann::json target;   // the target it was compiled for: {"arch": "ipu2", "overrides": {...}}
  nlohmann::json options;  // engine options compiled in (strings, as in Poplar)
  std::vector<Tensor> tensors;
  std::vector<ComputeSet> computeSets;
  std::vector<Stream> streams;
  std::vector<RemoteBuffer> remoteBuffers;  // Streaming Memory (remote_buffer.hpp)
  std::vector<Program> programs;
  std::vector<EntryPoint> entryPoints;
  // Replication (as Poplar's replicated graphs): 0 = one graph over every IPU;
  // k > 0 = each group of k IPUs (0..k-1, k..2k-1, ...) is one replica, whose
  // compute phases end in an internal sync when k = 1 (replicas run in step,
  // joined only by their cross-replica collectives' exchanges and syncs).
  std::uint32_t ipusPerReplica = 0;
  // Timing only: replicas described once (replica_mirror.hpp). Not serialized.
  ReplicaMirror mirror;
  // Matrix products the model may compute whole (fused_matmul.hpp). Not serialized.
  std::vector<FusedMatMul> fusedMatMuls;

  // Appends a program or compute set, giving it the next id; returns that id.
  Id addProgram(Program p) {
    p.id = Id(programs.size());
    programs.push_back(std::move(p));
    return programs.back().id;
  }
  Id addComputeSet(ComputeSet cs) {
    cs.id = Id(computeSets.size());
    computeSets.push_back(std::move(cs));
    return computeSets.back().id;
  }

  // Structural validation: ids in range, refs inside tensors, every vertex
  // field on the vertex's tile, mappings complete. Throws std::invalid_argument
  // naming the offending element.
  void validate(std::uint32_t numTilesTotal) const;
};

// JSON form of the executable (serialized_graph.json); toJson throws
// std::logic_error for a mirrored executable (it describes no replica but
// the first's work: serialize the full layout). fromJson throws
// std::invalid_argument naming the key path ("computeSets[3].vertices[7].tile")
// and what was expected.
nlohmann::json toJson(const Executable& exe);
Executable fromJson(const nlohmann::json& j);
Executable loadExecutable(const std::string& path);               // errors name the file
void saveExecutable(const Executable& exe, const std::string& path);

// The largest serialized graph loadExecutable reads, and so the largest any
// writer of one writes (design choice: 1 GiB, thousands of times the bundled
// graphs, so that a wrong path to a huge file is refused before it is read).
inline constexpr std::uint64_t kMaxExecutableFileBytes = 1ull << 30;

// The same JSON as toJson, written element by element (one tensor, compute
// set or program in memory at a time, compact, one element a line): host
// memory stays that of the largest element, not of the whole document.
// Checked before anything is written, a lower bound of the text's size
// (jsonBytesLowerBound, from the executable's counts of vertices, fields,
// tensor intervals and copy regions) against `maxBytes`, and while writing
// the bytes written: over it, std::length_error("the serialized graph ...
// takes more than N bytes ...") and the caller discards the partial output
// (OutputFile, saveExecutable's temporary file).
void writeJson(const Executable& exe, std::ostream& out, std::uint64_t maxBytes = kMaxExecutableFileBytes);
std::uint64_t jsonBytesLowerBound(const Executable& exe);

}  // namespace ipusim::ir
