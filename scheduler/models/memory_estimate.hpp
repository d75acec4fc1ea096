#pragma once
// The up-front memory check: from the layer shapes alone, before the op
// graph is built or a weight drawn, whether the model can fit the chip. The
// always-live bytes (weights, state, optimizer slots, stream buffers), the
// largest weight gradient and the activations the layers' backward passes
// keep (all live when it starts; each layer states its share,
// Layer::footprint in scheduler/layers/layer.hpp; the loss keeps the model's
// outputs), spread evenly over every
// tile, are a lower bound on what the
// compiled model needs per tile; when that bound exceeds a tile's capacity
// the compile fails at once with a Poplar-style summary, in bounded time
// and memory, whatever the model's size. (Models that pass are checked
// exactly after memory planning.)
#include "model/target.hpp"
#include "scheduler/models/workload.hpp"

#include <string>
#include <vector>

namespace ipusim::scheduler {

// The estimate itself: made once per compile, before the op graph is built,
// checked by checkModelFits and reported by `ipusim run --json`
// ("memory_estimate") and `compile` beside what the run then measured.
struct ModelMemoryEstimate {
  struct Variable {
    std::string name, category;
    long double bytes = 0;  // long double: a hostile layer width must not wrap around
  };
  std::vector<Variable> variables;  // largest first
  long double totalBytes = 0;       // one replica's, over all its tiles
  std::uint32_t tiles = 0;          // one replica's tiles
  std::vector<long double> slotBytes;  // each optimizer slot variable's bytes (fit only)
  long double bytesPerTile() const { return tiles ? totalBytes / tiles : totalBytes; }
};

ModelMemoryEstimate estimateModelMemory(const Workload& w, std::uint32_t tiles);

// What an out-of-memory summary adds to its ways out for a training step
// that keeps every activation for its backward pass (a fit that recomputes
// nothing): recomputation (a pipeline's recomputation mode, where "Auto"
// recomputes an op; or checkpoints); else empty.
std::string recomputationRemedy(const Workload& w);

// What an out-of-memory summary adds for a fit whose optimizer keeps state
// on the tiles (an ipu2 target, training.offload_optimizer_state false): the
// state offloaded to Streaming Memory, with what it saves per tile on the
// estimate's even spread and what its loads and stores cost per step
// (model/hardware/streaming_memory.hpp's transfer, plus a sync each); else empty.
std::string offloadRemedy(const Workload& w, const model::Target& target, const ModelMemoryEstimate& estimate);
// With R > 1 replicas and optimizer state not sharded: the remedy of
// sharding it (training.replicated_optimizer_state_sharding), with what it
// saves per tile on the estimate's even spread; else empty.
std::string shardingRemedy(const Workload& w, const ModelMemoryEstimate& estimate);
// The optimizer state's remedies above that apply, joined by ", " (empty: none).
std::string optimizerStateRemedies(const Workload& w, const model::Target& target, const ModelMemoryEstimate& estimate);

// Throws std::invalid_argument ("out of memory: ...") when the estimate per
// tile exceeds a tile's memory, unless w.allowOutOfMemory.
void checkModelFits(const Workload& w, const model::Target& target, const ModelMemoryEstimate& estimate);

}  // namespace ipusim::scheduler
