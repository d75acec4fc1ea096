#pragma once
// Test rig for the SystemC hardware model: a small target, executables built
// from IR structs, a device thread and an optional host thread, and an
// observer that records everything. One simulation per test (one process).
#include "model/clock.hpp"
#include "model/ipu_system.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace ipusim::model::testing {

// `numIpus` IPUs x 8 tiles at 1 GHz, round numbers so every formula is easy to check.
inline Target smallTarget(std::uint32_t numIpus = 1) {
  Target t = Target::preset("ipu2");
  t.set("clockHz", "1e9");
  t.set("tile.tilesPerIpu", "8");
  t.set("tile.supervisorOverheadCycles", "50");
  t.set("tile.vectorBytes", "8");
  t.set("exchange.bytesPerCycle", "4");
  t.set("exchange.pairedReceiveFactor", "2");
  t.set("exchange.latencyCycles", "20");
  t.set("sync.internalCycles", "100");
  t.set("sync.externalCycles", "500");
  t.set("ipuLink.numIpus", std::to_string(numIpus));
  t.set("ipuLink.linkBytesPerSecond", "16e9");  // 16 bytes per cycle per link and direction
  t.set("ipuLink.linksPerRung", "3");           // IPUs 2k, 2k+1: 48 bytes per cycle
  t.set("ipuLink.linksPerRail", "1");           // IPUs i, i+2: 16 bytes per cycle
  t.set("ipuLink.railsWrap", "0");
  t.set("ipuLink.latencyCycles", "300");        // per hop
  t.set("hostLink.bytesPerSecond", "16e9");  // 16 bytes per cycle
  t.set("hostLink.latencySeconds", "1e-6");  // 1000 cycles
  return t;
}

// Builds executables from IR structs: tensors mapped by hand, programs by id.
struct ExeBuilder {
  ir::Executable exe;

  // A float tensor of `n` elements, all on `tile` (unplaced: load() places it).
  ir::Id tensor(const std::string& name, std::uint64_t n, std::uint32_t tile,
                ir::DType type = ir::DType::Float, std::vector<double> init = {}) {
    return tensorMapped(name, n, {{tile, 0, n, ir::TileInterval::kUnplaced}}, type, std::move(init));
  }
  ir::Id tensorMapped(const std::string& name, std::uint64_t n, std::vector<ir::TileInterval> mapping,
                      ir::DType type = ir::DType::Float, std::vector<double> init = {}) {
    ir::Tensor t;
    t.id = ir::Id(exe.tensors.size());
    t.name = name;
    t.shape = {n};
    t.dtype = type;
    t.mapping = std::move(mapping);
    t.initialValue = std::move(init);
    exe.tensors.push_back(std::move(t));
    return exe.tensors.back().id;
  }
  ir::TensorRef all(ir::Id t) const { return {t, 0, exe.tensors[t].numElements()}; }

  ir::Id computeSet(const std::string& name) {
    ir::ComputeSet cs;
    cs.id = ir::Id(exe.computeSets.size());
    cs.name = name;
    exe.computeSets.push_back(cs);
    return cs.id;
  }
  void vertex(ir::Id cs, const std::string& codelet, std::uint32_t tile,
              std::vector<ir::VertexField> fields, std::map<std::string, double> params = {}) {
    exe.computeSets[cs].vertices.push_back({codelet, tile, std::move(fields), std::move(params)});
  }
  // Add vertex: out = in0 + in1, all three on `tile`.
  void add(ir::Id cs, std::uint32_t tile, ir::Id a, ir::Id b, ir::Id out) {
    vertex(cs, "Add", tile, {{"in0", all(a)}, {"in1", all(b)}, {"out", all(out)}});
  }
  ir::Id stream(const std::string& name, ir::StreamDirection dir, std::uint64_t elements,
                std::uint32_t depth = 1, ir::DType type = ir::DType::Float) {
    ir::Stream s;
    s.id = ir::Id(exe.streams.size());
    s.name = name;
    s.direction = dir;
    s.dtype = type;
    s.elementsPerCopy = elements;
    s.bufferDepth = depth;
    exe.streams.push_back(s);
    return s.id;
  }

  ir::Id program(ir::Program p) {
    p.id = ir::Id(exe.programs.size());
    if (p.name.empty()) p.name = std::string(ir::toString(p.kind)) + std::to_string(p.id);
    exe.programs.push_back(p);
    return p.id;
  }
  ir::Id execute(ir::Id cs) {
    ir::Program p; p.kind = ir::ProgramKind::Execute; p.computeSet = cs; return program(p);
  }
  ir::Id copy(ir::TensorRef src, ir::TensorRef dst) {
    ir::Program p; p.kind = ir::ProgramKind::Copy; p.src = src; p.dst = dst; return program(p);
  }
  ir::Id streamCopy(ir::Id stream, ir::TensorRef region) {
    ir::Program p; p.kind = ir::ProgramKind::StreamCopy; p.stream = stream; p.tensor = region; return program(p);
  }
  ir::Id sync(ir::SyncType type) {
    ir::Program p; p.kind = ir::ProgramKind::Sync; p.syncType = type; return program(p);
  }
  ir::Id sequence(std::vector<ir::Id> children, bool marksStep = false) {
    ir::Program p; p.kind = ir::ProgramKind::Sequence; p.children = std::move(children);
    p.marksStep = marksStep; return program(p);
  }
  ir::Id repeat(std::uint64_t count, ir::Id body) {
    ir::Program p; p.kind = ir::ProgramKind::Repeat; p.count = count; p.children = {body}; return program(p);
  }
  void entry(const std::string& name, ir::Id program) { exe.entryPoints.push_back({name, program}); }
};

// Records every observer call.
struct Recorder : ExecutionObserver {
  Detail detail = Detail::Phases;
  std::vector<RunEvent> runs;
  std::vector<PhaseEvent> phases;
  std::vector<StreamCopyEvent> copies;
  std::vector<StaticPhase> statics;
  std::vector<std::pair<Id, Cycles>> programBegins, programEnds;
  std::vector<std::uint64_t> steps;
  // Order of calls: 'S' staticPhase, 'P' phase (to check announcement order).
  std::string order;

  Detail detailFor(const RunEvent&) override { return detail; }
  void staticPhase(const StaticPhase& s) override { statics.push_back(s); order += 'S'; }
  void runBegin(const RunEvent& r) override { runs.push_back(r); }
  void runEnd(const RunEvent& r) override { runs.back() = r; }
  void programBegin(Id p, Cycles at) override { programBegins.push_back({p, at}); }
  void programEnd(Id p, Cycles at) override { programEnds.push_back({p, at}); }
  void stepBegin(std::uint64_t s, Cycles) override { steps.push_back(s); }
  void phase(const PhaseEvent& e) override { phases.push_back(e); order += 'P'; }
  void streamCopy(const StreamCopyEvent& e) override { copies.push_back(e); }

  std::vector<PhaseEvent> of(PhaseKind kind, std::uint32_t ipu) const {
    std::vector<PhaseEvent> out;
    for (const auto& p : phases)
      if (p.kind == kind && p.ipu == ipu) out.push_back(p);
    return out;
  }
};

// One simulation: a device thread (and optionally a host thread) around one
// IpuSystem. Exceptions thrown in either thread are rethrown by simulate().
class Rig : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Rig);
  explicit Rig(const Target& target, const char* name = "rig")
      : sc_core::sc_module(sc_core::sc_module_name(name)), system("system", target) {
    SC_THREAD(deviceThread);
    SC_THREAD(hostThread);
  }
  IpuSystem system;
  std::function<void(Rig&)> device;  // runs in the device thread
  std::function<void(Rig&)> host;    // runs in the host thread

  void simulate() {
    sc_core::sc_start();
    if (error) std::rethrow_exception(error);
  }
  // Runs `entry` and returns its duration in cycles (device thread only).
  Cycles timedRun(std::uint32_t entry) {
    const Cycles start = nowCycles();
    system.run(entry);
    return nowCycles() - start;
  }
  std::exception_ptr error;

 private:
  void deviceThread() { guard(device); }
  void hostThread() { guard(host); }
  void guard(const std::function<void(Rig&)>& body) {
    if (!body) return;
    try {
      body(*this);
    } catch (...) {
      if (!error) error = std::current_exception();
      sc_core::sc_stop();
    }
  }
};

inline std::vector<float> asFloats(const std::vector<std::uint8_t>& bytes) {
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}
inline Bytes floatBytes(const std::vector<float>& values) {
  Bytes out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace ipusim::model::testing
