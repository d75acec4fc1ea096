#pragma once
// ComputeSetPlan: a compute set made ready to run, once, at load():
// every vertex's codelet looked up and its fields resolved to tile-memory
// pointers (FieldData), and the static BSP timing (cycles per tile, compute
// phase per IPU) computed from the codelets' cycles().
//
// The hot path is run(): one Codelet::computeBatch() call per run of
// same-codelet vertices over fields and params stored contiguously (no
// lookups, no allocation, no per-vertex virtual call). Vertices of one
// compute set write disjoint regions (BSP), so runPart() splits them over a
// WorkerPool without changing the result.
#include "model/codelets/codelet.hpp"
#include "model/hardware/memory_layout.hpp"
#include "model/ir/replica_mirror.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::model::hardware {

// Consecutive vertices of one codelet, their fields and params stored flat.
struct VertexRun {
  const Codelet* codelet = nullptr;
  std::size_t firstVertex = 0;  // index in the compute set
  std::size_t count = 0;
  std::size_t numFields = 0;    // per vertex
  std::size_t numParams = 0;    // per vertex
  std::size_t firstField = 0;   // into the plan's field pool
  std::size_t firstParam = 0;   // into the plan's param pool
};

struct TileWork {
  std::uint32_t tile = 0;
  ir::Cycles cycles = 0;
  std::uint32_t vertices = 0;
};

class ComputeSetPlan {
 public:
  // A compute set `mirror` flags (timing only) holds replica 0's vertices:
  // tiles() and ipuCycles() then cover every replica, run() replica 0 only.
  ComputeSetPlan(const ir::ComputeSet& cs, const MemoryLayout& memory, const Target& target,
                 const ir::ReplicaMirror& mirror = {});

  // Functional execution: every vertex's compute(), in vertex order.
  void run() const { runVertices(0, numVertices()); }
  // Vertices [begin, end) in order, through Codelet::computeBatch.
  void runVertices(std::size_t begin, std::size_t end) const;
  // Part `part` of `parts` of the vertices, split so that each part touches
  // about the same number of field bytes. Parts are disjoint, cover every
  // vertex, and may run concurrently (BSP: vertices write disjoint regions).
  void runPart(unsigned part, unsigned parts) const;
  // Field bytes the vertices touch (with a fixed overhead per vertex): the
  // work estimate used to decide whether splitting is worth it.
  std::uint64_t workBytes() const { return workPrefix_.empty() ? 0 : workPrefix_.back(); }

  ir::Id id() const { return id_; }
  const std::string& name() const { return name_; }
  // Compute phase per IPU (max over its tiles); 0 for IPUs with no vertex.
  const std::vector<ir::Cycles>& ipuCycles() const { return ipuCycles_; }
  // IPUs with at least one vertex, ascending.
  const std::vector<std::uint32_t>& ipus() const { return ipus_; }
  // Tiles with at least one vertex, ascending.
  const std::vector<TileWork>& tiles() const { return tiles_; }
  std::size_t numVertices() const { return workPrefix_.size(); }

 private:
  ir::Id id_;
  std::string name_;
  std::vector<VertexRun> runs_;
  std::vector<FieldData> fieldPool_;
  std::vector<double> paramPool_;
  std::vector<std::uint64_t> workPrefix_;  // per vertex: work of vertices [0, i]
  std::vector<TileWork> tiles_;
  std::vector<ir::Cycles> ipuCycles_;
  std::vector<std::uint32_t> ipus_;
};

}  // namespace ipusim::model::hardware
