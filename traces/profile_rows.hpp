#pragma once
// One struct per row type of the profile database (see traces/SCHEMA.md).
// Times are device cycles; optional integers use -1 for SQL NULL.
#include <cstdint>
#include <string>

namespace ipusim::traces {

// 2: counters.run_id, counters.step; 3: slice_chunks.min_ts/max_end, slice_summary;
// 4: counter_summary
inline constexpr int kSchemaVersion = 4;

struct RunRow {
  std::int64_t id = 0;           // 0-based Engine::run index
  std::int64_t entryPoint = 0;   // program index passed to Engine::run
  std::string name;              // entry point name
  std::int64_t startCycle = 0, endCycle = 0;
  std::int64_t steps = 0;        // training steps executed in the run
  bool captured = false;         // whether its detail (slices) is in the profile
};

// Track kinds: "engine" (Engine::run and step slices), "host" (host
// processes), "stream" (StreamCopy Begin/Mid/End), "ipu" (group), "program"
// (an IPU's program steps, nested), "bsp" (an IPU's compute/exchange/sync),
// "counter" (a counter series such as the loss).
struct TrackRow {
  std::int64_t id = 0;
  std::int64_t parentId = -1;
  std::string kind;
  std::string name;
  std::int64_t ipu = -1;
  std::int64_t tile = -1;
  std::int64_t sortOrder = 0;
};

// Slice categories: "engine_run", "step", "program", "compute", "exchange",
// "sync", "stream_copy", "stream_copy_begin", "stream_copy_mid",
// "stream_copy_end", "ipu_link", "collective" (a collective's phases: the
// all-reduce), "streaming_memory" (a remote-buffer copy), "host" (host
// control), "host_io" (host data work).
struct SliceRow {
  std::int64_t id = 0;         // assigned by the writer when 0
  std::int64_t trackId = 0;
  std::int64_t runId = -1;
  std::int64_t ts = 0, dur = 0;
  std::string name;
  std::string category;
  std::int64_t depth = 0;
  std::int64_t parentId = -1;
  std::int64_t programId = -1;
  std::int64_t phaseId = -1;   // the static phase (compute set / exchange) it executes
  std::int64_t bytes = -1;     // bytes moved (exchange, stream copy Mid)
};

struct ProgramRow {
  std::int64_t id = 0;
  std::int64_t parentId = -1;
  std::string kind;            // Sequence, Execute, Copy, StreamCopy, Repeat, ...
  std::string name;
  std::string layer, op;       // debug origin in the workload
  std::int64_t ordinal = 0;    // position among its siblings
};

// A statically timed phase (compute set execution or exchange): the same
// per-tile cycles every time it runs.
struct PhaseRow {
  std::int64_t id = 0;
  std::string kind;            // "compute" | "exchange"
  std::string name;
  std::int64_t programId = -1;
  std::int64_t bytes = -1;
};

struct TilePhaseRow {
  std::int64_t phaseId = 0;
  std::int64_t ipu = 0;
  std::int64_t tile = 0;       // global tile index
  std::int64_t cycles = 0;     // busy cycles of this tile in the phase
  std::int64_t vertices = 0;   // compute: vertices on the tile; exchange: bytes received
};

struct TileMemoryRow {
  std::int64_t ipu = 0;
  std::int64_t tile = 0;       // global tile index
  std::string category;        // weights, activations, gradients, ...
  bool alwaysLive = true;
  std::int64_t bytes = 0;
};

// The per-tile memory figure: the peak of the placed addresses (what must fit
// in tile memory), with its always-live / not-always-live split. One row per
// tile holding data. tile_memory's category rows are a breakdown of what lives
// on the tile and may add up to more than the peak (not-always-live tensors
// share addresses).
struct TileMemoryPeakRow {
  std::int64_t ipu = 0;
  std::int64_t tile = 0;                    // global tile index
  std::int64_t peakBytes = 0;
  std::int64_t alwaysLiveBytes = 0;
  std::int64_t notAlwaysLivePeakBytes = 0;  // peakBytes - alwaysLiveBytes
};

struct CounterRow {
  std::int64_t trackId = 0;
  std::int64_t ts = 0;
  double value = 0;
  std::int64_t runId = -1;  // the Engine::run that produced the value; -1 (NULL) when none
  std::int64_t step = -1;   // the global step that produced it; -1 (NULL) when none
};

// The work of one Execute program step: what its compute set computes.
struct ProgramWorkRow {
  std::int64_t programId = 0;  // an Execute program
  std::int64_t flops = 0;      // floating-point operations of one execution
  std::int64_t vertices = 0;   // vertices in its compute set
  std::int64_t tiles = 0;      // distinct tiles those vertices run on
};

// A tensor of the executable: its size and liveness class.
struct TensorRow {
  std::int64_t id = 0;
  std::string name;
  std::string category;        // weights, activations, gradients, ...
  bool alwaysLive = true;      // false: shares bytes with tensors whose lifetimes do not meet
  std::int64_t bytes = 0;      // bytes over all tiles
  std::int64_t tiles = 0;      // tiles holding some of it
  std::string layer, op;       // debug origin in the workload
};

// Position of a leaf program step (Execute, Copy, StreamCopy, Sync) in the
// execution order of an entry point's program tree.
struct ProgramOrderRow {
  std::int64_t entryPoint = 0;
  std::int64_t position = 0;   // 0, 1, ... in program order
  std::int64_t programId = 0;
};

// The first and last program-order positions (of one entry point) that use a tensor.
struct TensorLifetimeRow {
  std::int64_t entryPoint = 0;
  std::int64_t tensorId = 0;
  std::int64_t firstPosition = 0, lastPosition = 0;
};

}  // namespace ipusim::traces
