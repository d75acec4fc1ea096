#include "model/hardware/program_executor.hpp"

#include "model/clock.hpp"
#include "model/stop_request.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::model::hardware {
namespace {

// Phases touching fewer bytes than this run on one thread: handing work to the
// pool costs microseconds, about what copying this much costs.
constexpr std::uint64_t kParallelWorkBytes = 128 * 1024;
// A large phase is cut into chunks of about this much work, at most
// kChunksPerThread per pool thread: small enough that a worker late to the
// phase still finds chunks, and that the caller waits at most about one chunk
// for a worker's, large enough that claiming one costs nothing measurable.
constexpr std::uint64_t kChunkWorkBytes = 32 * 1024;
constexpr unsigned kChunksPerThread = 4;

unsigned chunksFor(std::uint64_t workBytes, unsigned threads) {
  return unsigned(std::clamp<std::uint64_t>(workBytes / kChunkWorkBytes, 2, kChunksPerThread * threads));
}

// The pool's timing keys: compute sets and copies are timed apart.
std::uint64_t computeSetKey(ir::Id computeSet) { return computeSet; }
std::uint64_t copyKey(ir::Id copy) { return (std::uint64_t(1) << 32) | copy; }
std::uint64_t fusedKey(std::size_t group) { return (std::uint64_t(2) << 32) | group; }
std::uint64_t renamedExecuteKey(ir::Id program) { return (std::uint64_t(3) << 32) | program; }

}  // namespace

ProgramExecutor::ProgramExecutor(LoadedExecutable& loaded, HostLink& hostLink, const SyncController& sync,
                                 const ObserverSet& observers, WorkerPool& pool)
    : loaded_(loaded), hostLink_(hostLink), sync_(sync), observers_(observers), pool_(pool),
      announced_(loaded.numStaticPhases(), Detail::RunsOnly),
      isAnnounced_(loaded.numStaticPhases(), false) {
  for (std::uint32_t ipu = 0; ipu < loaded.target.numIpus(); ++ipu) allIpus_.push_back(ipu);
}

void ProgramExecutor::run(std::uint32_t entry, std::uint64_t runIndex) {
  const auto& entries = loaded_.exe.entryPoints;
  if (entry >= entries.size())
    throw std::invalid_argument("entry point " + std::to_string(entry) + " does not exist: the executable has " +
                                std::to_string(entries.size()));
  if (entries[entry].program >= loaded_.exe.programs.size())
    throw std::invalid_argument("entry point '" + entries[entry].name + "': program " +
                                std::to_string(entries[entry].program) + " does not exist");
  stepsThisRun_ = 0;
  runIndex_ = runIndex;
  RunEvent event;
  event.runIndex = runIndex;
  event.entryPoint = entry;
  event.name = entries[entry].name;
  event.start = nowCycles();
  observed_ = !observers_.empty();
  detail_ = observed_ ? observers_.detailFor(event) : Detail::RunsOnly;
  if (observed_) observers_.each([&](ExecutionObserver& o) { o.runBegin(event); });
  execute(entries[entry].program);
  event.end = nowCycles();
  event.steps = stepsThisRun_;
  if (observed_) observers_.each([&](ExecutionObserver& o) { o.runEnd(event); });
}

void ProgramExecutor::execute(ir::Id id) {
  // An interrupt stops the run between program steps (see model/stop_request.hpp).
  if (stopRequested()) throw StopRequested();
  const ir::Program& p = loaded_.exe.programs[id];
  if (phases()) observers_.each([&](ExecutionObserver& o) { o.programBegin(id, nowCycles()); });
  const std::uint64_t step = stepsTotal_;
  if (p.marksStep) {
    ++stepsTotal_;
    ++stepsThisRun_;
    currentStep_ = std::int64_t(step);
    if (phases()) observers_.each([&](ExecutionObserver& o) { o.stepBegin(step, nowCycles()); });
  }
  if (p.collective && p.kind == ir::ProgramKind::Sequence && beforeCollective_) beforeCollective_(id);
  switch (p.kind) {
    case ir::ProgramKind::Sequence:
      if (p.ipusApart) {
        executeApart(p);
        break;
      }
      for (ir::Id child : p.children) execute(child);
      break;
    case ir::ProgramKind::Execute: executeComputeSet(p); break;
    case ir::ProgramKind::Copy: executeCopy(p); break;
    case ir::ProgramKind::StreamCopy: executeStreamCopy(p); break;
    case ir::ProgramKind::Repeat:
      for (std::uint64_t i = 0; i < p.count; ++i) execute(p.children[0]);
      break;
    case ir::ProgramKind::RepeatWhileTrue:
      execute(p.children[0]);
      while (condition(p)) {
        execute(p.children[1]);
        execute(p.children[0]);
      }
      break;
    case ir::ProgramKind::If:
      if (condition(p))
        execute(p.children[0]);
      else if (p.children.size() > 1)
        execute(p.children[1]);
      break;
    case ir::ProgramKind::Sync: executeSync(p); break;
    case ir::ProgramKind::Call: execute(p.callee); break;
    case ir::ProgramKind::RemoteCopy: executeRemoteCopy(p); break;
  }
  if (p.marksStep && phases()) observers_.each([&](ExecutionObserver& o) { o.stepEnd(step, nowCycles()); });
  if (phases()) observers_.each([&](ExecutionObserver& o) { o.programEnd(id, nowCycles()); });
}

bool ProgramExecutor::condition(const ir::Program& p) const {
  const ConditionSlot& c = loaded_.conditions[p.id];
  return loadElement(c.dtype, c.data) != 0.0;
}

void ProgramExecutor::emitPhase(std::uint32_t ipu, PhaseKind kind, Cycles start, Cycles duration,
                                ir::Id program, ir::Id staticPhase, std::uint64_t bytes) const {
  if (duration == 0) return;
  PhaseEvent e;
  e.ipu = ipu;
  e.kind = kind;
  e.start = start;
  e.duration = duration;
  e.program = program;
  e.staticPhase = staticPhase;
  e.bytes = bytes;
  e.collective = program != ir::kNoId && loaded_.exe.programs[program].collective;
  observers_.each([&](ExecutionObserver& o) { o.phase(e); });
}

// Announced once, before its first PhaseEvent; again (same id) only if a later
// run asks for Tiles detail and the first announcement carried no tile data.
void ProgramExecutor::announce(ir::Id id, const ir::Program& p) {
  const bool wantTiles = detail_ >= Detail::Tiles;
  if (isAnnounced_[id] && (announced_[id] >= Detail::Tiles || !wantTiles)) return;
  StaticPhase s;
  s.id = id;
  s.program = p.id;
  const std::uint32_t numTiles = loaded_.target.totalTiles();
  if (p.kind == ir::ProgramKind::Execute) {
    const ComputeSetPlan& plan = loaded_.computeSets[p.computeSet];
    s.kind = PhaseKind::Compute;
    s.name = plan.name();
    if (wantTiles) {
      s.tileCycles.assign(numTiles, 0);
      s.tileVertices.assign(numTiles, 0);
      for (const TileWork& w : plan.tiles()) {
        s.tileCycles[w.tile] = std::uint32_t(w.cycles);
        s.tileVertices[w.tile] = w.vertices;
      }
    }
  } else {
    const ExchangePlan& plan = loaded_.copies[loaded_.copyIndexOfProgram[p.id]];
    s.kind = PhaseKind::Exchange;
    s.name = p.name;
    s.bytes = plan.totalBytes;
    if (wantTiles) {
      s.tileCycles.assign(numTiles, 0);
      s.tileVertices.assign(numTiles, 0);
      for (const ExchangeTileTraffic& t : plan.tiles) {
        s.tileCycles[t.tile] = std::uint32_t(t.cycles);
        s.tileVertices[t.tile] = std::uint32_t(t.receivedBytes);
      }
    }
  }
  isAnnounced_[id] = true;
  announced_[id] = detail_;
  observers_.each([&](ExecutionObserver& o) { o.staticPhase(s); });
}

bool ProgramExecutor::runFused(const ir::Program& p) {
  if (loaded_.fused.empty()) return false;
  const std::int32_t group = loaded_.fused.groupOfProgram[p.id];
  if (group < 0) return false;
  const FusedMatMuls::Group& g = loaded_.fused.groups[std::size_t(group)];
  if (p.id != g.last) return true;
  FusedScratch& scratch = loaded_.fused.scratch;
  for (const FusedMatMulPlan& plan : g.plans) {
    plan.gather(scratch);
    if (pool_.size() > 1 && plan.workBytes() >= kParallelWorkBytes) {
      // A part (whole panels, or bands of rows) per thread: each element's
      // arithmetic is the same whoever computes it, and a part is work enough.
      const unsigned parts = unsigned(std::min<std::uint64_t>(pool_.size(), plan.maxParts()));
      pool_.run(
          fusedKey(std::size_t(group)), parts, [&](unsigned part) { plan.computePart(scratch, part, parts); },
          [&] { plan.computePart(scratch, 0, 1); });
    } else {
      plan.computePart(scratch, 0, 1);
    }
    plan.store(scratch);
  }
  return true;
}

void ProgramExecutor::runComputeSet(const ir::Program& p) {
  if (!loaded_.functional || runFused(p)) return;
  const ComputeSetPlan& plan = loaded_.functionalPlan(p);
  if (pool_.size() > 1 && plan.workBytes() >= kParallelWorkBytes) {
    const unsigned chunks = chunksFor(plan.workBytes(), pool_.size());
    const std::uint64_t key = p.renames.empty() ? computeSetKey(p.computeSet) : renamedExecuteKey(p.id);
    pool_.run(
        key, chunks, [&](unsigned chunk) { plan.runPart(chunk, chunks); },
        [&] { plan.run(); });
  } else {
    plan.run();
  }
}

void ProgramExecutor::runCopy(const ir::Program& p) {
  if (!loaded_.functional || runFused(p)) return;
  const ir::Id index = loaded_.copyIndexOfProgram[p.id];
  const ExchangePlan& plan = loaded_.copies[index];
  if (pool_.size() > 1 && plan.copies.independent() && plan.copies.totalBytes() >= kParallelWorkBytes) {
    const unsigned chunks = chunksFor(plan.copies.totalBytes(), pool_.size());
    pool_.run(
        copyKey(index), chunks, [&](unsigned chunk) { ExchangeFabric::executePart(plan, chunk, chunks); },
        [&] { ExchangeFabric::execute(plan); });
  } else {
    ExchangeFabric::execute(plan);
  }
}

const std::vector<std::uint32_t>& ProgramExecutor::ipusOf(const ComputeSetPlan& plan) const {
  // An empty compute set still synchronises every IPU.
  return plan.ipus().empty() ? allIpus_ : plan.ipus();
}

ir::SyncType ProgramExecutor::syncTypeOf(const ir::Program& p) const {
  return loaded_.exe.computeSets[p.computeSet].independentPerIpu
             ? ir::SyncType::Internal
             : SyncController::typeFor(ipusOf(loaded_.computeSets[p.computeSet]), loaded_.exe.ipusPerReplica);
}

void ProgramExecutor::executeComputeSet(const ir::Program& p) {
  runComputeSet(p);
  const ComputeSetPlan& plan = loaded_.computeSets[p.computeSet];
  const std::vector<std::uint32_t>& ipus = ipusOf(plan);
  Cycles slowest = 0;
  for (std::uint32_t ipu : ipus) slowest = std::max(slowest, plan.ipuCycles()[ipu]);
  const ir::SyncType type = syncTypeOf(p);
  const Cycles total = slowest + sync_.cycles(type);
  if (phases()) {
    announce(plan.id(), p);
    const Cycles start = nowCycles();
    for (std::uint32_t ipu : ipus) {
      const Cycles compute = plan.ipuCycles()[ipu];
      emitPhase(ipu, PhaseKind::Compute, start, compute, p.id, plan.id(), 0);
      emitPhase(ipu, PhaseKind::Sync, start + compute, sync_.phaseCycles(type, compute, slowest), p.id,
                ir::kNoId, 0);
    }
  }
  if (total) sc_core::wait(cyclesToTime(total));
}

void ProgramExecutor::executeCopy(const ir::Program& p) {
  runCopy(p);
  const ir::Id index = loaded_.copyIndexOfProgram[p.id];
  const ExchangePlan& plan = loaded_.copies[index];
  if (phases()) {
    const ir::Id staticId = loaded_.copyStaticPhase(index);
    announce(staticId, p);
    const Cycles start = nowCycles();
    for (std::uint32_t ipu : plan.ipus)
      emitPhase(ipu, plan.ipuUsesLink[ipu] ? PhaseKind::IpuLinkCopy : PhaseKind::Exchange, start, plan.cycles,
                p.id, staticId, plan.ipuReceivedBytes[ipu]);
  }
  if (plan.cycles) sc_core::wait(cyclesToTime(plan.cycles));
}

void ProgramExecutor::executeApart(const ir::Program& sequence) {
  const Cycles start = nowCycles();
  std::vector<Cycles> clock(allIpus_.size(), 0);  // each IPU's clock, in cycles from the Sequence's start
  // Whether an IPU ran its own program here (a compute set, a copy within
  // it), not only its part of a copy over the links that others joined it for.
  std::vector<bool> ranOwn(allIpus_.size(), false);
  // IPUs joined by a phase meet first: the early ones wait, in a Sync phase
  // (as an IPU waiting at a barrier in lockstep). Returns the meeting time.
  const auto join = [&](const std::vector<std::uint32_t>& ipus, ir::Id program, Cycles barrier) {
    Cycles at = 0;
    for (std::uint32_t ipu : ipus) at = std::max(at, clock[ipu]);
    for (std::uint32_t ipu : ipus) {
      if (phases())
        emitPhase(ipu, PhaseKind::Sync, start + clock[ipu], at + barrier - clock[ipu], program, ir::kNoId, 0);
      clock[ipu] = at + barrier;
    }
    return at + barrier;
  };
  for (ir::Id id : sequence.children) {
    if (stopRequested()) throw StopRequested();
    const ir::Program& p = loaded_.exe.programs[id];
    if (p.kind == ir::ProgramKind::Execute) {
      runComputeSet(p);
      const ComputeSetPlan& plan = loaded_.computeSets[p.computeSet];
      const std::vector<std::uint32_t>& ipus = ipusOf(plan);
      const ir::SyncType type = syncTypeOf(p);
      if (phases()) announce(plan.id(), p);
      if (type == ir::SyncType::Internal) {
        // Each IPU computes and syncs its own tiles on its own clock.
        for (std::uint32_t ipu : ipus) {
          const Cycles compute = plan.ipuCycles()[ipu];
          if (phases()) {
            emitPhase(ipu, PhaseKind::Compute, start + clock[ipu], compute, p.id, plan.id(), 0);
            emitPhase(ipu, PhaseKind::Sync, start + clock[ipu] + compute, sync_.cycles(type), p.id, ir::kNoId, 0);
          }
          clock[ipu] += compute + sync_.cycles(type);
          ranOwn[ipu] = true;
        }
      } else {
        // Closed by an external sync: the IPUs start together and wait for the slowest.
        const Cycles at = join(ipus, p.id, 0);
        Cycles slowest = 0;
        for (std::uint32_t ipu : ipus) slowest = std::max(slowest, plan.ipuCycles()[ipu]);
        for (std::uint32_t ipu : ipus) {
          const Cycles compute = plan.ipuCycles()[ipu];
          if (phases()) {
            emitPhase(ipu, PhaseKind::Compute, start + at, compute, p.id, plan.id(), 0);
            emitPhase(ipu, PhaseKind::Sync, start + at + compute, sync_.phaseCycles(type, compute, slowest), p.id,
                      ir::kNoId, 0);
          }
          clock[ipu] = at + slowest + sync_.cycles(type);
          ranOwn[ipu] = true;
        }
      }
    } else if (p.kind == ir::ProgramKind::Copy) {
      runCopy(p);
      const ir::Id index = loaded_.copyIndexOfProgram[p.id];
      const ExchangePlan& plan = loaded_.copies[index];
      const ir::Id staticId = loaded_.copyStaticPhase(index);
      if (phases()) announce(staticId, p);
      // A copy over the IPU-Links joins its IPUs; one within each IPU leaves them apart.
      const bool link = std::any_of(plan.ipus.begin(), plan.ipus.end(),
                                    [&](std::uint32_t ipu) { return plan.ipuUsesLink[ipu]; });
      const Cycles at = link ? join(plan.ipus, p.id, 0) : 0;
      for (std::uint32_t ipu : plan.ipus) {
        const Cycles from = link ? at : clock[ipu];
        if (phases())
          emitPhase(ipu, plan.ipuUsesLink[ipu] ? PhaseKind::IpuLinkCopy : PhaseKind::Exchange, start + from,
                    plan.cycles, p.id, staticId, plan.ipuReceivedBytes[ipu]);
        clock[ipu] = from + plan.cycles;
        ranOwn[ipu] = ranOwn[ipu] || !link;
      }
    } else {
      throw std::logic_error("program '" + sequence.name + "' runs its IPUs apart but child '" + p.name + "' is a " +
                             ir::toString(p.kind));
    }
  }
  // The IPUs that ran their own programs meet at the end: several IPUs of a
  // replica in an external sync (the one before the next slot's inter-IPU
  // copies), the early ones waiting in it. An IPU that ran none (a pipeline
  // stage with no pass in the slot) has no phase after its part of the
  // copies that joined it: idle, as in lockstep an IPU with nothing in a phase.
  std::vector<std::uint32_t> ran;
  for (std::uint32_t ipu : allIpus_)
    if (ranOwn[ipu]) ran.push_back(ipu);
  Cycles end = clock.empty() ? 0 : *std::max_element(clock.begin(), clock.end());
  const ir::SyncType type = SyncController::typeFor(ran, loaded_.exe.ipusPerReplica);
  if (type == ir::SyncType::External) end = std::max(end, join(ran, sequence.id, sync_.cycles(type)));
  if (end) sc_core::wait(cyclesToTime(end));
}

void ProgramExecutor::executeSync(const ir::Program& p) {
  const Cycles cycles = sync_.cycles(p.syncType);
  if (phases()) {
    const Cycles start = nowCycles();
    for (std::uint32_t ipu : allIpus_) emitPhase(ipu, PhaseKind::Sync, start, cycles, p.id, ir::kNoId, 0);
  }
  if (cycles) sc_core::wait(cyclesToTime(cycles));
}

void ProgramExecutor::executeStreamCopy(const ir::Program& p) {
  HostStream& stream = *loaded_.streams[p.stream];
  const ir::StreamDirection direction = stream.spec().direction;
  const bool toDevice = direction == ir::StreamDirection::HostToDevice;
  const std::uint64_t bytes = stream.bytesPerCopy();
  const Cycles begin = nowCycles();

  // Begin: the host's start-up delay, then the host side, then the link channel.
  if (const Cycles delay = stream.consumeNextCopyDelay()) sc_core::wait(cyclesToTime(delay));
  Bytes payload;
  if (toDevice)
    payload = stream.takeForDevice();
  else
    stream.waitForSpace();
  hostLink_.acquire(direction);
  const Cycles afterBegin = nowCycles();

  // Host service and Mid, holding the channel of this direction: to the
  // device the host hands its buffer over, then the bytes cross the link;
  // to the host the bytes cross, then the host takes the buffer.
  const Cycles service = stream.hostServiceCycles();
  const Cycles transfer = hostLink_.transferCycles(bytes);
  const Cycles serviceStart = toDevice ? afterBegin : afterBegin + transfer;
  const Cycles transferStart = toDevice ? afterBegin + service : afterBegin;
  if (service + transfer) sc_core::wait(cyclesToTime(service + transfer));
  hostLink_.release(direction);
  if (loaded_.functional) {
    if (toDevice) {
      if (payload.size() != bytes)
        throw std::invalid_argument("stream '" + stream.spec().name + "': the host provided " +
                                    std::to_string(payload.size()) + " bytes, expected " +
                                    std::to_string(bytes));
      loaded_.memory.writeRegion(p.tensor, payload.data());
    } else {
      payload.resize(bytes);
      loaded_.memory.readRegion(p.tensor, payload.data());
    }
  }
  // The copy's origin travels with it, so the host can stamp what it
  // receives with the step that produced it.
  if (!toDevice) stream.giveFromDevice(std::move(payload), {transferStart + transfer, std::int64_t(runIndex_), currentStep_});
  const Cycles end = nowCycles();

  // End: the completion sync.
  const Cycles endCycles = sync_.cycles(ir::SyncType::External);
  if (endCycles) sc_core::wait(cyclesToTime(endCycles));

  if (phases()) {
    auto emit = [&](StreamCopyPhase phase, Cycles start, Cycles duration, std::uint64_t n) {
      StreamCopyEvent e;
      e.stream = p.stream;
      e.streamName = stream.spec().name;
      e.phase = phase;
      e.start = start;
      e.duration = duration;
      e.bytes = n;
      e.program = p.id;
      observers_.each([&](ExecutionObserver& o) { o.streamCopy(e); });
    };
    emit(StreamCopyPhase::Begin, begin, afterBegin - begin, 0);
    // A stream without host service time has no HostService phase.
    if (toDevice) {
      if (service) emit(StreamCopyPhase::HostService, serviceStart, service, 0);
      emit(StreamCopyPhase::Mid, transferStart, end - transferStart, bytes);
    } else {
      emit(StreamCopyPhase::Mid, transferStart, service ? transfer : end - transferStart, bytes);
      if (service) emit(StreamCopyPhase::HostService, serviceStart, end - serviceStart, 0);
    }
    emit(StreamCopyPhase::End, end, endCycles, 0);
    for (std::uint32_t ipu : allIpus_)
      emitPhase(ipu, PhaseKind::StreamCopy, begin, end + endCycles - begin, p.id, ir::kNoId, bytes);
  }
}

void ProgramExecutor::executeRemoteCopy(const ir::Program& p) {
  StreamingMemory& remote = loaded_.streamingMemory;
  const StreamingMemory::CopyPlan& plan = remote.plan(p.id);
  const Cycles begin = nowCycles();
  if (loaded_.functional) {
    std::vector<std::uint8_t>& buffer = remote.bytes(p.remoteBuffer);
    if (p.remoteStore)
      loaded_.memory.readRegion(p.tensor, buffer.data());
    else
      loaded_.memory.writeRegion(p.tensor, buffer.data());
  }
  // Every IPU waits for the slowest IPU's transfer, then the completion sync.
  const Cycles endCycles = sync_.cycles(ir::SyncType::External);
  if (plan.cycles + endCycles) sc_core::wait(cyclesToTime(plan.cycles + endCycles));
  if (phases())
    for (std::uint32_t ipu : allIpus_)
      emitPhase(ipu, PhaseKind::StreamingMemory, begin, plan.cycles + endCycles, p.id, ir::kNoId, plan.bytesPerIpu[ipu]);
}

}  // namespace ipusim::model::hardware
