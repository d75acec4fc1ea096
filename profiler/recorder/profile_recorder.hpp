#pragma once
// ProfileRecorder: the profiler's observer of the model. It turns execution
// events into profile rows (traces/) and decides what is captured, as
// Poplar's autoReport does: every Engine::run gets a row in `runs`; the first
// `captureRunsPerProgram` runs of each entry program are captured in detail
// (program steps, BSP phases per IPU, stream copies, steps); tile detail is
// written once per static phase when the level asks for it.
//
// Bounded by what is captured, not by run length: a captured run records at
// most `maxSlicesPerRun` slices (plus the slices of the programs still open
// when the cap is reached, so that every recorded slice keeps its parent);
// the rest of that run is left out and the run is listed by truncatedRuns().
#include "model/ir/executable.hpp"
#include "model/ir/tile_memory_usage.hpp"
#include "model/observer.hpp"
#include "model/target.hpp"
#include "traces/profile_writer.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ipusim::profiler {

// The IPUs whose own rows a profile holds: their tracks, BSP phases, program
// slices, tile cycles and tile memory. One process records every IPU; an
// instance of several (mpirun: sim/engine/instance_share.hpp) records its
// replicas' IPUs, as Poplar's profile of one process holds that process's
// replicas; `ipusim report DIR` reads the instances' profiles as one system
// (profiler/analysis/instance_profiles.hpp).
struct RecordedIpus {
  std::uint32_t first = 0;
  std::uint32_t count = 0;  // 0: every IPU from `first`
  bool holds(std::uint32_t ipu, std::uint32_t numIpus) const {
    return ipu >= first && ipu < numIpus && (count == 0 || ipu - first < count);
  }
};

struct RecorderConfig {
  std::uint64_t captureRunsPerProgram = 2;
  bool captureExecution = true;                    // false: runs table only
  model::Detail capturedDetail = model::Detail::Tiles;  // Phases or Tiles
  // A million slices is about 100 MB of profile and a few seconds of writing
  // (design choice: far above a normal captured run — the tutorial's captured
  // runs hold a few thousand — yet bounded when a Repeat runs a million times).
  std::uint64_t maxSlicesPerRun = 1'000'000;
  RecordedIpus ipus;
};

class ProfileRecorder : public model::ExecutionObserver {
 public:
  ProfileRecorder(traces::ProfileWriter& writer, const ir::Executable& exe, const model::Target& target,
                  RecorderConfig config);

  // Graph profile: the program tree (with debug origins) and tile memory.
  void writePrograms(bool withDebugInfo);
  // Per tile: the peak (tile_memory_peak) and the category breakdown
  // (tile_memory), from the one tile memory figure (ir::tileMemoryUsage).
  void writeTileMemory(const std::vector<ir::TileMemoryUsage>& usage);
  // The executable's facts the operations and liveness reports need: the
  // work (FLOPs, vertices, tiles) of each Execute step, the tensors, and per
  // entry point the program order and each tensor's first and last use in it
  // (profiler/recorder/program_liveness.hpp).
  void writeExecutableFacts();

  std::uint64_t runsRecorded() const { return runsRecorded_; }
  std::uint64_t runsCaptured() const { return runsCaptured_; }
  // Captured runs whose detail reached maxSlicesPerRun, by run index.
  const std::vector<std::int64_t>& truncatedRuns() const { return truncatedRuns_; }

  // model::ExecutionObserver
  model::Detail detailFor(const model::RunEvent& run) override;
  void staticPhase(const model::StaticPhase& phase) override;
  void runBegin(const model::RunEvent& run) override;
  void runEnd(const model::RunEvent& run) override;
  void programBegin(ir::Id program, ir::Cycles at) override;
  void programEnd(ir::Id program, ir::Cycles at) override;
  void stepBegin(std::uint64_t step, ir::Cycles at) override;
  void stepEnd(std::uint64_t step, ir::Cycles at) override;
  void phase(const model::PhaseEvent& event) override;
  void streamCopy(const model::StreamCopyEvent& event) override;
  void host(const model::HostEvent& event) override;
  void counter(const model::CounterSample& sample) override;

 private:
  // An executing program node: one slice id per IPU (the program tree runs on every IPU).
  struct OpenSlice { std::vector<std::int64_t> ids; ir::Id program; ir::Cycles start; };
  struct IpuTracks { std::int64_t programs, bsp; };
  bool recorded(std::uint32_t ipu) const { return config_.ipus.holds(ipu, target_.numIpus()); }

  std::int64_t newSliceId() { return nextSliceId_++; }
  std::int64_t trackFor(std::map<std::string, std::int64_t>& tracks, const std::string& kind, const std::string& name,
                        std::int64_t sortOrder);
  bool capturing() const { return capturingRun_; }
  // Whether the captured run may record another slice; the first "no" marks the run truncated.
  bool roomForDetail();

  traces::ProfileWriter& writer_;
  const ir::Executable& exe_;
  const model::Target& target_;
  RecorderConfig config_;

  std::int64_t engineTrack_ = 0, streamTrack_ = 0;
  std::vector<IpuTracks> ipuTracks_;  // the recorded IPUs', from config_.ipus.first
  std::map<std::string, std::int64_t> hostTracks_, counterTracks_;
  std::int64_t nextSliceId_ = 1;
  std::int64_t nextSortOrder_ = 100;

  std::map<ir::Id, std::uint64_t> runsPerEntry_;
  std::set<ir::Id> phasesWritten_, phaseTilesWritten_;
  std::uint64_t runsRecorded_ = 0, runsCaptured_ = 0;
  std::int64_t capturedUntil_ = -1;  // end cycle of the last captured run
  bool capturingRun_ = false;
  std::int64_t currentRun_ = -1;
  std::int64_t currentRunSlice_ = -1;
  std::int64_t currentStepSlice_ = -1;
  ir::Cycles stepStart_ = 0;
  std::vector<OpenSlice> programStack_;
  std::vector<model::StreamCopyEvent> pendingStreamPhases_;
  std::uint64_t runFirstSlice_ = 0;  // writer_.slicesWritten() when the run began
  bool truncatedRun_ = false;
  std::vector<std::int64_t> truncatedRuns_;
};

}  // namespace ipusim::profiler
