#pragma once
// The bundled example graph (workloads/graphs/stream_pipeline.json), built
// with the GraphBuilder, and the host-side computation of what it produces.
//
// Inside Repeat(repeats): stream x (n floats) in; on `tiles` tiles
// t = x * w, y = relu(t); exchange: every tile's chunk of y moves to the next
// tile (z = y rotated by one chunk); per-tile partial sums of z; exchange of
// the partials to tile 0; total = sum(partials); an external sync; stream z
// and total out. It exercises streaming in and out, compute on many tiles,
// exchanges, syncs and a Repeat.
#include "model/ir/executable.hpp"
#include "model/target.hpp"

#include <vector>

namespace ipusim::sim {

struct StreamPipelineShape {
  std::uint32_t tiles = 64;
  std::uint64_t elementsPerTile = 64;
  std::uint64_t repeats = 4;
};

ir::Executable buildStreamPipeline(const model::Target& target, const StreamPipelineShape& shape = {});

// The weights the graph multiplies by (its initial value of w).
double streamPipelineWeight(std::uint64_t element);

// What one iteration outputs for input x: z (rotated relu(x*w)) and its total.
struct StreamPipelineOutput {
  std::vector<double> z;
  double total = 0;
};
StreamPipelineOutput streamPipelineReference(const std::vector<double>& x, const StreamPipelineShape& shape);

}  // namespace ipusim::sim
