#pragma once
// ComputeSetPlan: a compute set made ready to run, once, at load():
// every vertex's codelet looked up and its fields resolved to tile-memory
// pointers (FieldData), and the static BSP timing (cycles per tile, compute
// phase per IPU) computed from the codelets' cycles().
//
// The hot path is run(): a flat loop of codelet->compute() calls over
// pre-resolved pointers, no lookups, no allocation. Vertices of one compute
// set write disjoint regions (BSP), so run() could be split over a thread
// pool by ranges of vertices without changing the result.
#include "model/codelets/codelet.hpp"
#include "model/hardware/memory_layout.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::model::hardware {

struct ResolvedVertex {
  const Codelet* codelet = nullptr;
  std::vector<FieldData> fields;  // in Codelet::fields() order
  std::vector<double> params;     // in Codelet::params() order
};

struct TileWork {
  std::uint32_t tile = 0;
  ir::Cycles cycles = 0;
  std::uint32_t vertices = 0;
};

class ComputeSetPlan {
 public:
  ComputeSetPlan(const ir::ComputeSet& cs, const MemoryLayout& memory, const Target& target);

  // Functional execution: every vertex's compute(), in vertex order.
  void run() const {
    for (const ResolvedVertex& v : vertices_) v.codelet->compute(v.fields, v.params);
  }

  ir::Id id() const { return id_; }
  const std::string& name() const { return name_; }
  // Compute phase per IPU (max over its tiles); 0 for IPUs with no vertex.
  const std::vector<ir::Cycles>& ipuCycles() const { return ipuCycles_; }
  // IPUs with at least one vertex, ascending.
  const std::vector<std::uint32_t>& ipus() const { return ipus_; }
  // Tiles with at least one vertex, ascending.
  const std::vector<TileWork>& tiles() const { return tiles_; }
  std::size_t numVertices() const { return vertices_.size(); }

 private:
  ir::Id id_;
  std::string name_;
  std::vector<ResolvedVertex> vertices_;
  std::vector<TileWork> tiles_;
  std::vector<ir::Cycles> ipuCycles_;
  std::vector<std::uint32_t> ipus_;
};

}  // namespace ipusim::model::hardware
