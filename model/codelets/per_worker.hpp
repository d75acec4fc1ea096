#pragma once
// PerWorker<C>: one vertex in ipusim's graph for the C worker vertices a
// tile runs side by side, one a worker context, each on its share of the
// work. Poplar's graph holds the worker vertices (popops' reductions place
// one ContinuousReduce or ScaledReduce a worker, each over a list of
// regions; elementwise ops one a worker, or a multi-vertex a tile);
// ipusim's holds one, so that a matmul's partials, reduced on every owner
// tile of every product, and every elementwise op are not millions of
// vertices (BERT-base's graph: 5.8 million before, 2.5 million after).
// What depends on the worker vertices still sees them:
//   - timing: addWorkerCycles gives each share's cycles, which the tile
//     balances over its contexts as it balances worker vertices;
//   - code memory: workerVertices gives how many vertices Poplar's graph
//     would hold (each with C's fields and params).
// The functional part is C's on the whole fields, the same numbers: each
// share's results depend on its own elements only.
//
// Contract:
// - perWorkerName("ReduceSum") is "PerWorker<ReduceSum>", the name the
//   registry holds the wrapper of a worker codelet under.
// - The shares, by kind: a reduction over axis 0 (`in` rows x cols summed
//   into `out`'s cols): share w takes columns [w c, (w + 1) c) of every row,
//   c = ceil(cols / workers). A map (every field the same size): runs of
//   the elements, at most one a worker and each at least a vector of the
//   result's type, split evenly, the first ones one longer. Both as the
//   lowering cut them into worker vertices.
// - validate() is C's, and refuses what the shares cannot divide (axis 1;
//   fields of different sizes), naming the codelet.
#include "model/codelets/codelet.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>

namespace ipusim::model {

std::string perWorkerName(const std::string& workerCodelet);
bool isPerWorkerName(const std::string& codelet);  // "PerWorker<...>"
// The codelet a vertex runs: C for PerWorker<C>, else `codelet` itself.
std::string workerCodeletOf(const std::string& codelet);

// How many worker vertices a vertex is, as Poplar's graph holds them: 1, or
// a per-worker vertex's Codelet::workerVertices. The one count behind every
// figure that says "vertices" (compile's graph line, code memory, the
// profile's vertices per tile); each codelet looked up once per name.
class WorkerVertexCount {
 public:
  explicit WorkerVertexCount(const TileParams& tile) : tile_(tile) {}
  std::uint64_t operator()(const ir::Vertex& v);

 private:
  TileParams tile_;
  std::unordered_map<ir::Name, const Codelet*> perWorker_;  // null: not a per-worker codelet
};

// Registers the per-worker codelets the compiler lowers to (codelet_registry.cpp).
void addPerWorkerCodelets(CodeletRegistry& registry);

}  // namespace ipusim::model
