#pragma once
// Compute sets: groups of vertices (codelet instances) that run in one BSP
// compute phase. Every field of a vertex must lie on the vertex's tile, as in
// Poplar; data elsewhere is brought in by an exchange (Copy) first.
#include "model/ir/name.hpp"
#include "model/ir/types.hpp"
#include "model/ir/vertex_params.hpp"

#include <vector>

namespace ipusim::ir {

// Names are interned (name.hpp): a compiled model holds millions of these.
struct VertexField {
  Name name;  // as the codelet names it: "in", "out", "a", "b", ...
  TensorRef ref;
};

struct Vertex {
  Name codelet;              // registered codelet name, e.g. "MatMulPartial"
  std::uint32_t tile = 0;    // global tile index
  std::vector<VertexField> fields;
  VertexParams params;       // scalar parameters: "scale", "m", "k", "n", ...
};

struct ComputeSet {
  Id id = kNoId;
  std::string name;
  std::vector<Vertex> vertices;
  DebugInfo debug;
  // Its vertices on each IPU are independent of the other IPUs' (pipeline
  // stages run side by side, each as its IPU's own program would): each IPU
  // closes its part with an internal sync rather than all with an external one.
  bool independentPerIpu = false;
};

}  // namespace ipusim::ir
