#pragma once
// ProgramExecutor: walks an ir::Program tree in the caller's SC_THREAD and
// advances simulated time by one wait() per phase (never ticking).
//
// Per program kind:
//   Execute    compute phase (per IPU: max over its tiles) + sync phase
//              (internal on one IPU; external when the compute set spans
//              several, each IPU waiting for the slowest). One wait.
//   Copy       exchange phase (see ExchangeFabric). One wait.
//   StreamCopy Begin (wait for the host, its delayNextCopy(), the link channel),
//              HostService (the stream's host service cycles) and Mid
//              (HostLink::transferCycles), both holding the channel: service
//              first to the device, transfer first to the host (no
//              HostService phase when the stream has no service time);
//              End (sync.externalCycles). All IPUs are stalled throughout.
//   RemoteCopy the longest IPU's transfer to or from Streaming Memory
//              (StreamingMemory::CopyPlan), then sync.externalCycles; all IPUs
//              are stalled throughout (one StreamingMemory phase each).
//   Sync       sync.internalCycles or sync.externalCycles on every IPU.
//   Sequence, Repeat, RepeatWhileTrue, If, Call: no time of their own.
//   A Sequence with ipusApart (a pipeline slot) runs its Execute and Copy
//   children on per-IPU clocks, as Poplar runs each IPU's program between
//   the syncs that join IPUs: a compute set closed by internal syncs advances
//   each of its IPUs by its own cycles; one closed by an external sync and a
//   copy over the IPU-Links first join their IPUs (the early ones wait in a
//   Sync phase); a copy within each IPU leaves them apart. At the end the
//   IPUs that ran their own programs (compute sets, copies within an IPU)
//   meet (an external sync when they are several IPUs of a replica, the
//   early ones waiting in it); an IPU that ran none is idle after its part
//   of the copies that joined it.
//   One wait, to the meeting. Its children get no programBegin/End (their
//   spans differ per IPU): their phases carry their program ids.
//
// Functional work of a large phase (compute-set vertices, exchange bytes) is
// split into chunks over the WorkerPool (which times each phase and runs it on
// the calling thread alone when that is faster); small phases run on the
// calling thread, where a hand-off would cost more than the work.
//
// Observer calls follow the run's Detail (see model/observer.hpp). A phase of
// zero cycles produces no PhaseEvent.
#include "model/hardware/host_link.hpp"
#include "model/hardware/loaded_executable.hpp"
#include "model/hardware/observer_set.hpp"
#include "model/hardware/sync_controller.hpp"
#include "model/hardware/worker_pool.hpp"

#include <functional>
#include <vector>

namespace ipusim::model::hardware {

class ProgramExecutor {
 public:
  ProgramExecutor(LoadedExecutable& loaded, HostLink& hostLink, const SyncController& sync,
                  const ObserverSet& observers, WorkerPool& pool);
  // Runs entry point `entry` as run number `runIndex`. SC_THREAD context.
  void run(std::uint32_t entry, std::uint64_t runIndex);
  // Called before each collective Sequence runs (LoadOptions::beforeCollective).
  void setBeforeCollective(std::function<void(ir::Id)> hook) { beforeCollective_ = std::move(hook); }

 private:
  void execute(ir::Id program);
  void executeComputeSet(const ir::Program& p);
  void executeCopy(const ir::Program& p);
  void executeApart(const ir::Program& sequence);  // a Sequence with ipusApart
  void runComputeSet(const ir::Program& p);        // the vertices (functional mode), no time
  void runCopy(const ir::Program& p);              // the bytes (functional mode), no time
  // A program of a product computed whole (fused_matmul.hpp): the product
  // runs at its last program; true when `p`'s own data work is thereby done.
  bool runFused(const ir::Program& p);
  const std::vector<std::uint32_t>& ipusOf(const ComputeSetPlan& plan) const;
  ir::SyncType syncTypeOf(const ir::Program& p) const;
  void executeStreamCopy(const ir::Program& p);
  void executeRemoteCopy(const ir::Program& p);
  void executeSync(const ir::Program& p);
  bool condition(const ir::Program& p) const;
  void announce(ir::Id staticPhase, const ir::Program& p);
  void emitPhase(std::uint32_t ipu, PhaseKind kind, Cycles start, Cycles duration, ir::Id program,
                 ir::Id staticPhase, std::uint64_t bytes) const;
  bool phases() const { return detail_ >= Detail::Phases; }

  LoadedExecutable& loaded_;
  HostLink& hostLink_;
  const SyncController& sync_;
  const ObserverSet& observers_;
  WorkerPool& pool_;
  Detail detail_ = Detail::RunsOnly;
  bool observed_ = false;               // any observer at all
  std::uint64_t stepsTotal_ = 0;        // across runs: numbers steps
  std::uint64_t stepsThisRun_ = 0;
  std::uint64_t runIndex_ = 0;
  std::int64_t currentStep_ = -1;       // the step being executed (global number), -1 before any
  std::vector<Detail> announced_;       // per static phase: detail it was announced at
  std::vector<bool> isAnnounced_;
  std::vector<std::uint32_t> allIpus_;
  std::function<void(ir::Id)> beforeCollective_;
};

}  // namespace ipusim::model::hardware
