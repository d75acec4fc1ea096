#pragma once
// The up-front memory check: from the layer shapes alone, before the op
// graph is built or a weight drawn, whether the model can fit the chip. The
// always-live bytes (weights, state, optimizer slots, stream buffers), the
// largest weight gradient and the activations the layers' backward passes
// keep (all live when it starts; each layer states its share,
// Layer::footprint in scheduler/layers/layer.hpp), spread evenly over every
// tile, are a lower bound on what the
// compiled model needs per tile; when that bound exceeds a tile's capacity
// the compile fails at once with a Poplar-style summary, in bounded time
// and memory, whatever the model's size. (Models that pass are checked
// exactly after memory planning.)
#include "model/target.hpp"
#include "scheduler/models/workload.hpp"

namespace ipusim::scheduler {

// Throws std::invalid_argument ("out of memory: ...") unless
// w.allowOutOfMemory.
void checkModelFits(const Workload& w, const model::Target& target, std::uint32_t tiles);

}  // namespace ipusim::scheduler
