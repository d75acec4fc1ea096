#pragma once
// ExecutionObserver: how the profiler (or any tracer) watches the model.
// The model contains no tracing code: it calls these hooks, and only the
// hooks an observer asked for (see detail()). All times are device cycles
// since the start of the simulation.
#include "model/ir/types.hpp"

#include <string>
#include <vector>

namespace ipusim::model {

using ir::Cycles;
using ir::Id;

// StreamingMemory: a remote-buffer copy to or from Streaming Memory.
enum class PhaseKind : std::uint8_t { Compute, Exchange, Sync, StreamCopy, IpuLinkCopy, StreamingMemory };
const char* toString(PhaseKind kind);

// A stream copy's phases, in time order: Begin (the device waits for the host
// to have data or buffer space, and for the link channel), HostService (the
// host runtime hands the buffer over: its callback and bookkeeping, no bytes
// on the link), Mid (the bytes cross the host link), End (completion sync).
// PopVision shows HostService and Mid together as one "Mid"; they are apart
// here so that host time is never mistaken for transfer time.
enum class StreamCopyPhase : std::uint8_t { Begin, HostService, Mid, End };
const char* toString(StreamCopyPhase phase);

// What an observer wants recorded for the run about to start.
enum class Detail : std::uint8_t {
  RunsOnly,  // one runBegin/runEnd pair, steps counted; nothing inside
  Phases,    // + program steps, per-IPU BSP phases, stream copies, counters
  Tiles,     // + per-tile cycles of each static phase (written once per phase)
};

// A statically timed phase: a compute set execution or an exchange, whose
// per-tile cycles never change between executions (BSP). Announced once, the
// first time it executes, before any PhaseEvent refers to it.
struct StaticPhase {
  Id id = 0;
  PhaseKind kind = PhaseKind::Compute;
  std::string name;
  Id program = ir::kNoId;                  // the program step that runs it
  std::vector<std::uint32_t> tileCycles;   // per global tile: busy cycles (0 = idle); only with Detail::Tiles
  std::vector<std::uint32_t> tileVertices; // per global tile: vertices (Compute) or bytes received (Exchange); only with Detail::Tiles
  std::uint64_t bytes = 0;                 // Exchange: total bytes moved
};

struct RunEvent {
  std::uint64_t runIndex = 0;   // 0-based count of Engine::run calls
  Id entryPoint = 0;
  std::string name;             // entry point name
  Cycles start = 0, end = 0;    // end valid in runEnd
  std::uint64_t steps = 0;      // training steps executed (programs with marksStep), valid in runEnd
};

struct PhaseEvent {  // one BSP phase on one IPU
  std::uint32_t ipu = 0;
  PhaseKind kind = PhaseKind::Compute;
  Cycles start = 0, duration = 0;
  Id program = ir::kNoId;     // program step it belongs to
  Id staticPhase = ir::kNoId; // for Compute/Exchange: the StaticPhase
  std::uint64_t bytes = 0;
  bool collective = false;    // run by a collective's program step (ir::Program::collective)
};

struct StreamCopyEvent {
  Id stream = 0;
  std::string streamName;
  StreamCopyPhase phase = StreamCopyPhase::Begin;
  Cycles start = 0, duration = 0;
  std::uint64_t bytes = 0;    // Mid: bytes moved over the host link
  Id program = ir::kNoId;
};

// One sample of a counter series (the training loss), stamped with the
// device step that produced it: `at` is when the device delivered it, `run`
// and `step` the Engine::run index and global step number (-1 when unknown,
// e.g. a value computed by the host alone).
struct CounterSample {
  std::string name;
  Cycles at = 0;
  double value = 0;
  std::int64_t run = -1;
  std::int64_t step = -1;
};

struct HostEvent {  // activity of a host process (emitted by the host runtime in sim/)
  std::string track;          // "training loop", "dataset", ...
  std::string name;           // "Engine::run dispatch", "prepare batch", ...
  std::string category;       // "host"
  Cycles start = 0, duration = 0;
};

class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  // Asked at the start of every run (run.runIndex, run.entryPoint, run.start set).
  virtual Detail detailFor(const RunEvent& run) { return Detail::Phases; }
  virtual void staticPhase(const StaticPhase&) {}
  virtual void runBegin(const RunEvent&) {}
  virtual void runEnd(const RunEvent&) {}
  virtual void programBegin(Id program, Cycles at) {}
  virtual void programEnd(Id program, Cycles at) {}
  virtual void stepBegin(std::uint64_t step, Cycles at) {}
  virtual void stepEnd(std::uint64_t step, Cycles at) {}
  virtual void phase(const PhaseEvent&) {}
  virtual void streamCopy(const StreamCopyEvent&) {}
  virtual void host(const HostEvent&) {}
  virtual void counter(const CounterSample&) {}
};

}  // namespace ipusim::model
