#include "profiler/recorder/profile_recorder.hpp"

#include "model/codelets/per_worker.hpp"
#include "profiler/recorder/flop_count.hpp"
#include "profiler/recorder/program_liveness.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace ipusim::profiler {

namespace {

const char* categoryOf(ir::ProgramKind kind) {
  switch (kind) {
    case ir::ProgramKind::Execute: return "compute";
    case ir::ProgramKind::Copy: return "exchange";
    case ir::ProgramKind::StreamCopy: return "stream_copy";
    case ir::ProgramKind::RemoteCopy: return "streaming_memory";
    case ir::ProgramKind::Sync: return "sync";
    default: return "program";
  }
}

const char* categoryOf(model::PhaseKind kind) {
  switch (kind) {
    case model::PhaseKind::Compute: return "compute";
    case model::PhaseKind::Exchange: return "exchange";
    case model::PhaseKind::Sync: return "sync";
    case model::PhaseKind::StreamCopy: return "stream_copy";
    case model::PhaseKind::IpuLinkCopy: return "ipu_link";
    case model::PhaseKind::StreamingMemory: return "streaming_memory";
  }
  return "program";
}

const char* categoryOf(model::StreamCopyPhase phase) {
  switch (phase) {
    case model::StreamCopyPhase::Begin: return "stream_copy_begin";
    case model::StreamCopyPhase::HostService: return "stream_copy_host_service";
    case model::StreamCopyPhase::Mid: return "stream_copy_mid";
    case model::StreamCopyPhase::End: return "stream_copy_end";
  }
  return "stream_copy";
}

// PopVision's names of the StreamCopy phases; PopVision's Mid is split into
// the host's service ("Mid: host service") and the transfer ("Mid").
const char* labelOf(model::StreamCopyPhase phase) {
  switch (phase) {
    case model::StreamCopyPhase::Begin: return "Begin";
    case model::StreamCopyPhase::HostService: return "Mid: host service";
    case model::StreamCopyPhase::Mid: return "Mid";
    case model::StreamCopyPhase::End: return "End";
  }
  return "StreamCopy";
}

std::string programLabel(const ir::Program& p) {
  if (!p.name.empty()) return p.name;
  return ir::toString(p.kind);
}

}  // namespace

ProfileRecorder::ProfileRecorder(traces::ProfileWriter& writer, const ir::Executable& exe,
                                 const model::Target& target, RecorderConfig config)
    : writer_(writer), exe_(exe), target_(target), config_(config) {
  engineTrack_ = writer_.addTrack({0, -1, "engine", "Engine::run", -1, -1, 0});
  streamTrack_ = writer_.addTrack({0, -1, "stream", "StreamCopy", -1, -1, 20});
  for (std::uint32_t ipu = config_.ipus.first; recorded(ipu); ++ipu) {
    const std::int64_t order = 30 + 10 * ipu;
    const std::string name = "IPU " + std::to_string(ipu);
    const std::int64_t group = writer_.addTrack({0, -1, "ipu", name, ipu, -1, order});
    IpuTracks tracks;
    tracks.programs = writer_.addTrack({0, group, "program", name + " programs", ipu, -1, order + 1});
    tracks.bsp = writer_.addTrack({0, group, "bsp", name + " BSP", ipu, -1, order + 2});
    ipuTracks_.push_back(tracks);
  }
}

std::int64_t ProfileRecorder::trackFor(std::map<std::string, std::int64_t>& tracks, const std::string& kind,
                                       const std::string& name, std::int64_t sortOrder) {
  auto it = tracks.find(name);
  if (it != tracks.end()) return it->second;
  const std::int64_t id = writer_.addTrack({0, -1, kind, name, -1, -1, sortOrder});
  tracks.emplace(name, id);
  return id;
}

void ProfileRecorder::writePrograms(bool withDebugInfo) {
  std::vector<std::int64_t> parent(exe_.programs.size(), -1), ordinal(exe_.programs.size(), 0);
  for (const auto& p : exe_.programs) {
    std::int64_t i = 0;
    for (ir::Id child : p.children) {
      if (child < parent.size() && parent[child] < 0 && child != p.id) {
        parent[child] = p.id;
        ordinal[child] = i;
      }
      ++i;
    }
    if (p.kind == ir::ProgramKind::Call && p.callee < parent.size() && parent[p.callee] < 0) parent[p.callee] = p.id;
  }
  for (const auto& p : exe_.programs) {
    traces::ProgramRow row;
    row.id = p.id;
    row.parentId = parent[p.id];
    row.kind = ir::toString(p.kind);
    row.name = programLabel(p);
    if (withDebugInfo) {
      row.layer = p.debug.layer;
      row.op = p.debug.op;
    }
    row.ordinal = ordinal[p.id];
    writer_.addProgram(row);
  }
}

void ProfileRecorder::writeTileMemory(const std::vector<ir::TileMemoryUsage>& usage) {
  for (const ir::TileMemoryUsage& u : usage) {
    const std::int64_t ipu = target_.ipuOf(u.tile);
    if (!recorded(std::uint32_t(ipu))) continue;
    writer_.addTileMemoryPeak({ipu, u.tile, std::int64_t(u.peakBytes), std::int64_t(u.alwaysLiveBytes),
                               std::int64_t(u.notAlwaysLivePeakBytes)});
    for (const ir::CategoryBytes& c : u.categories)
      writer_.addTileMemory({ipu, u.tile, c.category, c.alwaysLive, std::int64_t(c.bytes)});
  }
}

void ProfileRecorder::writeExecutableFacts() {
  // A per-worker vertex counts as the worker vertices Poplar's graph holds,
  // as compile's figure and tile_phase_cycles count it (one count of vertices).
  model::WorkerVertexCount workerVertices(target_.tile);
  for (const auto& p : exe_.programs) {
    if (p.kind != ir::ProgramKind::Execute || p.computeSet >= exe_.computeSets.size()) continue;
    const ir::ComputeSet& cs = exe_.computeSets[p.computeSet];
    std::set<std::uint32_t> tiles;
    std::uint64_t vertices = 0;
    for (const auto& v : cs.vertices) tiles.insert(v.tile), vertices += workerVertices(v);
    // A mirrored compute set holds one replica's vertices for every replica's.
    const std::int64_t copies = exe_.mirror.computeSet(cs.id) ? exe_.mirror.replicas : 1;
    writer_.addProgramWork({p.id, copies * static_cast<std::int64_t>(computeSetFlops(cs)),
                            copies * static_cast<std::int64_t>(vertices),
                            copies * static_cast<std::int64_t>(tiles.size())});
  }
  for (const auto& t : exe_.tensors) {
    std::set<std::uint32_t> tiles;
    for (const auto& interval : t.mapping)
      if (interval.end > interval.begin) tiles.insert(interval.tile);
    writer_.addTensor({t.id, t.name, t.category, t.alwaysLive, static_cast<std::int64_t>(t.numBytes()),
                       static_cast<std::int64_t>(tiles.size()), t.debug.layer, t.debug.op});
  }
  for (std::size_t entry = 0; entry < exe_.entryPoints.size(); ++entry) {
    const ProgramLiveness liveness = programLiveness(exe_, exe_.entryPoints[entry].program);
    for (std::size_t position = 0; position < liveness.order.size(); ++position)
      writer_.addProgramOrder({std::int64_t(entry), std::int64_t(position), liveness.order[position]});
    for (const auto& l : liveness.lifetimes)
      writer_.addTensorLifetime({std::int64_t(entry), l.tensor, std::int64_t(l.first), std::int64_t(l.last)});
  }
}

model::Detail ProfileRecorder::detailFor(const model::RunEvent& run) {
  if (!config_.captureExecution) return model::Detail::RunsOnly;
  return runsPerEntry_[run.entryPoint] < config_.captureRunsPerProgram ? config_.capturedDetail
                                                                      : model::Detail::RunsOnly;
}

void ProfileRecorder::staticPhase(const model::StaticPhase& phase) {
  // The model may announce a phase again, with tile cycles, when a later run
  // asks for more detail than the first: its row is written once, its tile rows once.
  if (phasesWritten_.insert(phase.id).second) {
    const char* kind = phase.kind == model::PhaseKind::Exchange ? "exchange" : "compute";
    writer_.addPhase({phase.id, kind, phase.name, phase.program == ir::kNoId ? -1 : std::int64_t(phase.program),
                      phase.kind == model::PhaseKind::Exchange ? std::int64_t(phase.bytes) : -1});
  }
  if (config_.capturedDetail != model::Detail::Tiles || phase.tileCycles.empty() ||
      !phaseTilesWritten_.insert(phase.id).second)
    return;
  for (std::size_t tile = 0; tile < phase.tileCycles.size(); ++tile) {
    if (phase.tileCycles[tile] == 0 || !recorded(target_.ipuOf(std::uint32_t(tile)))) continue;
    const std::int64_t vertices = tile < phase.tileVertices.size() ? phase.tileVertices[tile] : 0;
    writer_.addTilePhase({phase.id, target_.ipuOf(tile), std::int64_t(tile), phase.tileCycles[tile], vertices});
  }
}

bool ProfileRecorder::roomForDetail() {
  if (truncatedRun_) return false;
  if (writer_.slicesWritten() - runFirstSlice_ < config_.maxSlicesPerRun) return true;
  truncatedRun_ = true;
  truncatedRuns_.push_back(currentRun_);
  pendingStreamPhases_.clear();
  return false;
}

void ProfileRecorder::runBegin(const model::RunEvent& run) {
  capturingRun_ = detailFor(run) != model::Detail::RunsOnly;
  ++runsPerEntry_[run.entryPoint];
  currentRun_ = static_cast<std::int64_t>(run.runIndex);
  currentRunSlice_ = capturingRun_ ? newSliceId() : -1;
  programStack_.clear();
  runFirstSlice_ = writer_.slicesWritten();
  truncatedRun_ = false;
}

void ProfileRecorder::runEnd(const model::RunEvent& run) {
  writer_.addRun({std::int64_t(run.runIndex), run.entryPoint, run.name, std::int64_t(run.start), std::int64_t(run.end),
                  std::int64_t(run.steps), capturingRun_});
  ++runsRecorded_;
  if (capturingRun_) {
    ++runsCaptured_;
    capturedUntil_ = std::max<std::int64_t>(capturedUntil_, std::int64_t(run.end));
    traces::SliceRow slice;
    slice.id = currentRunSlice_;
    slice.trackId = engineTrack_;
    slice.runId = currentRun_;
    slice.ts = run.start;
    slice.dur = run.end - run.start;
    // With several entry points (fit with validation), which one ran: "Engine::run #2 validation".
    slice.name = "Engine::run #" + std::to_string(run.runIndex) + (exe_.entryPoints.size() > 1 ? " " + run.name : "");
    slice.category = "engine_run";
    slice.programId = run.entryPoint < exe_.entryPoints.size() ? exe_.entryPoints[run.entryPoint].program : -1;
    writer_.addSlice(slice);
  }
  capturingRun_ = false;
  currentRunSlice_ = -1;
}

void ProfileRecorder::programBegin(ir::Id program, ir::Cycles at) {
  if (!capturing()) return;
  OpenSlice open{{}, program, at};  // no ids: past the cap, nothing is written for it
  if (roomForDetail())
    for (std::size_t i = 0; i < ipuTracks_.size(); ++i) open.ids.push_back(newSliceId());
  programStack_.push_back(std::move(open));
}

void ProfileRecorder::programEnd(ir::Id program, ir::Cycles at) {
  if (!capturing() || programStack_.empty()) return;
  const OpenSlice open = programStack_.back();
  programStack_.pop_back();
  if (open.program != program)
    throw std::logic_error("profile recorder: program " + std::to_string(program) + " ended while program " +
                           std::to_string(open.program) + " was open");
  if (open.ids.empty()) return;
  const ir::Program& p = exe_.programs.at(program);
  for (std::size_t ipu = 0; ipu < ipuTracks_.size(); ++ipu) {  // (the recorded IPUs, by their index in ipuTracks_)
    traces::SliceRow slice;
    slice.id = open.ids[ipu];
    slice.trackId = ipuTracks_[ipu].programs;
    slice.runId = currentRun_;
    slice.ts = open.start;
    slice.dur = at - open.start;
    slice.name = programLabel(p);
    slice.category = categoryOf(p.kind);
    slice.depth = static_cast<std::int64_t>(programStack_.size());
    slice.parentId = programStack_.empty() ? -1 : programStack_.back().ids[ipu];
    slice.programId = program;
    writer_.addSlice(slice);
  }
}

void ProfileRecorder::stepBegin(std::uint64_t step, ir::Cycles at) {
  if (!capturing() || !roomForDetail()) return;
  currentStepSlice_ = newSliceId();
  stepStart_ = at;
}

void ProfileRecorder::stepEnd(std::uint64_t step, ir::Cycles at) {
  if (!capturing() || currentStepSlice_ < 0) return;
  traces::SliceRow slice;
  slice.id = currentStepSlice_;
  slice.trackId = engineTrack_;
  slice.runId = currentRun_;
  slice.ts = stepStart_;
  slice.dur = at - stepStart_;
  slice.name = "Step " + std::to_string(step);
  slice.category = "step";
  slice.depth = 1;
  slice.parentId = currentRunSlice_;
  writer_.addSlice(slice);
  currentStepSlice_ = -1;
}

void ProfileRecorder::phase(const model::PhaseEvent& event) {
  if (!capturing() || !recorded(event.ipu) || !roomForDetail()) return;
  traces::SliceRow slice;
  slice.id = newSliceId();
  slice.trackId = ipuTracks_[event.ipu - config_.ipus.first].bsp;
  slice.runId = currentRun_;
  slice.ts = event.start;
  slice.dur = event.duration;
  slice.category = event.collective ? "collective" : categoryOf(event.kind);
  slice.name = slice.category;
  if (event.program != ir::kNoId && event.program < exe_.programs.size()) {
    const ir::Program& p = exe_.programs[event.program];
    if (p.kind == ir::ProgramKind::Execute && p.computeSet < exe_.computeSets.size())
      slice.name = exe_.computeSets[p.computeSet].name;
    else if (!p.name.empty())
      slice.name = p.name;
    slice.programId = event.program;
  }
  if (event.kind == model::PhaseKind::Sync) slice.name = "Sync";
  if (event.staticPhase != ir::kNoId) slice.phaseId = event.staticPhase;
  if (event.bytes) slice.bytes = static_cast<std::int64_t>(event.bytes);
  writer_.addSlice(slice);
}

void ProfileRecorder::streamCopy(const model::StreamCopyEvent& event) {
  if (!capturing() || !roomForDetail()) return;
  pendingStreamPhases_.push_back(event);
  if (event.phase != model::StreamCopyPhase::End) return;
  // The StreamCopy slice spans its Begin, Mid and End phases, which nest under it.
  traces::SliceRow parent;
  parent.id = newSliceId();
  parent.trackId = streamTrack_;
  parent.runId = currentRun_;
  parent.ts = pendingStreamPhases_.front().start;
  parent.dur = event.start + event.duration - parent.ts;
  parent.name = "StreamCopy " + event.streamName;
  parent.category = "stream_copy";
  parent.programId = event.program == ir::kNoId ? -1 : std::int64_t(event.program);
  std::int64_t bytes = 0;
  for (const auto& phase : pendingStreamPhases_) bytes += static_cast<std::int64_t>(phase.bytes);
  parent.bytes = bytes;
  writer_.addSlice(parent);
  for (const auto& phase : pendingStreamPhases_) {
    traces::SliceRow child;
    child.id = newSliceId();
    child.trackId = streamTrack_;
    child.runId = currentRun_;
    child.ts = phase.start;
    child.dur = phase.duration;
    child.name = labelOf(phase.phase);
    child.category = categoryOf(phase.phase);
    child.depth = 1;
    child.parentId = parent.id;
    child.programId = parent.programId;
    if (phase.bytes) child.bytes = static_cast<std::int64_t>(phase.bytes);
    writer_.addSlice(child);
  }
  pendingStreamPhases_.clear();
}

void ProfileRecorder::host(const model::HostEvent& event) {
  // Host activity is kept around the captured runs: before and during them.
  // A host span is reported when it ends: one that began inside a captured
  // run (the outfeed's last dequeue of the run) is kept though the run ended.
  const bool inCaptureWindow = capturingRun_ || std::int64_t(event.start) < capturedUntil_ ||
                               (config_.captureExecution && runsRecorded_ < config_.captureRunsPerProgram);
  if (!inCaptureWindow || (capturingRun_ && !roomForDetail())) return;
  traces::SliceRow slice;
  slice.id = newSliceId();
  slice.trackId = trackFor(hostTracks_, "host", event.track, 10 + std::int64_t(hostTracks_.size()));
  slice.runId = currentRunSlice_ >= 0 ? currentRun_ : -1;
  slice.ts = event.start;
  slice.dur = event.duration;
  slice.name = event.name;
  slice.category = event.category.empty() ? "host" : event.category;
  writer_.addSlice(slice);
}

void ProfileRecorder::counter(const model::CounterSample& sample) {
  // Counters (the loss) are cheap and wanted for every step, captured or not.
  const std::int64_t track =
      trackFor(counterTracks_, "counter", sample.name, 1000 + std::int64_t(counterTracks_.size()));
  writer_.addCounter({track, std::int64_t(sample.at), sample.value, sample.run, sample.step});
}

}  // namespace ipusim::profiler
