#include "scheduler/lowering/ir_builder.hpp"

#include "model/codelets/codelet.hpp"
#include "model/hardware/remote_buffer_bytes.hpp"
#include "model/hardware/transfer_cycles.hpp"
#include "scheduler/planning/cost_model.hpp"

#include <algorithm>
#include <unordered_map>

namespace ipusim::scheduler {

void IrBuilder::beginOp(const ir::DebugInfo& debug) {
  debug_ = debug;
  opPrograms_.clear();
}

std::vector<ir::Id> IrBuilder::endOp() { return std::exchange(opPrograms_, {}); }

ir::Id IrBuilder::addTensor(const std::string& name, std::vector<std::uint64_t> shape, ir::DType dtype,
                            const std::string& category, bool alwaysLive, const Placement& placement) {
  ir::Tensor t;
  t.id = ir::Id(exe_.tensors.size());
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.category = category;
  t.alwaysLive = alwaysLive;
  t.debug = debug_;
  for (const PlacedRange& r : normalized(placement)) t.mapping.push_back({r.tile + tileBase_, r.begin, r.end});
  exe_.tensors.push_back(std::move(t));
  spans_.push_back({step_, step_});
  return exe_.tensors.back().id;
}

std::pair<ir::Id, std::vector<std::uint64_t>> IrBuilder::addBlocks(const std::string& name, ir::DType dtype,
                                                                  const std::vector<std::uint32_t>& tiles,
                                                                  const std::vector<std::uint64_t>& sizes) {
  Placement p;
  std::vector<std::uint64_t> first;
  std::uint64_t at = 0;
  for (std::size_t b = 0; b < sizes.size(); ++b) {
    first.push_back(at);
    p.push_back({at, at + sizes[b], tiles[b]});
    at += sizes[b];
  }
  return {addTensor(name, {at}, dtype, "temporaries", false, p), first};
}

Placement IrBuilder::placementOf(ir::Id tensor) const {
  Placement p;
  // Unsigned arithmetic: another shard's tiles wrap outside [0, tiles).
  for (const ir::TileInterval& iv : exe_.tensors[tensor].mapping) p.push_back({iv.begin, iv.end, iv.tile - tileBase_});
  return p;
}

void IrBuilder::use(ir::Id tensor) { useAt(tensor, step_); }

void IrBuilder::useAt(ir::Id tensor, std::size_t step) {
  UseSpan& s = spans_[tensor];
  s.first = std::min(s.first, step);
  s.second = std::max(s.second, step);
}

ir::Id IrBuilder::addProgram(ir::Program p) {
  p.id = ir::Id(exe_.programs.size());
  if (p.debug.layer.empty()) p.debug = debug_;
  exe_.programs.push_back(std::move(p));
  opPrograms_.push_back(exe_.programs.back().id);
  ++step_;
  return exe_.programs.back().id;
}

void IrBuilder::copy(std::vector<ir::CopyRegion> regions, const std::string& what, ir::Cycles estimate) {
  if (regions.empty()) return;
  ir::Program p;
  p.kind = ir::ProgramKind::Copy;
  p.name = debug_.layer + "/" + debug_.op + "/" + what;
  for (const ir::CopyRegion& r : regions) use(r.src.tensor), use(r.dst.tensor);
  if (regions.size() == 1 && regions[0].rows <= 1) p.src = regions[0].src, p.dst = regions[0].dst;
  else p.regions = std::move(regions);
  estimate_ += estimate;
  addProgram(std::move(p));
}

ir::Id IrBuilder::addRemoteBuffer(ir::Id tensor, std::vector<double> initialValue) {
  const ir::Tensor& t = exe_.tensors[tensor];
  ir::RemoteBuffer b;
  b.id = ir::Id(exe_.remoteBuffers.size());
  b.name = t.name;
  b.dtype = t.dtype;
  b.elements = t.numElements();
  b.initialValue = std::move(initialValue);
  b.debug = debug_;
  exe_.remoteBuffers.push_back(std::move(b));
  return exe_.remoteBuffers.back().id;
}

void IrBuilder::remoteCopy(ir::Id tensor, ir::Id buffer, bool store) {
  const ir::Tensor& t = exe_.tensors[tensor];
  // Each IPU moves the bytes on its tiles; every IPU waits for the slowest, then syncs.
  const std::vector<std::uint64_t> bytesOnIpu =
      model::hardware::regionBytesPerIpu(t, {tensor, 0, t.numElements()}, target_);
  estimate_ += model::hardware::remoteCopyCycles(target_, bytesOnIpu) + target_.sync.externalCycles;
  ir::Program p;
  p.kind = ir::ProgramKind::RemoteCopy;
  p.name = debug_.layer + "/" + debug_.op + "/" + (store ? "store_" : "load_") + exe_.remoteBuffers[buffer].name;
  p.remoteBuffer = buffer;
  p.remoteStore = store;
  p.tensor = {tensor, 0, t.numElements()};
  use(tensor);
  addProgram(std::move(p));
}

void IrBuilder::execute(std::vector<ir::Vertex> vertices, const std::string& what, std::size_t estimated) {
  ir::ComputeSet cs;
  cs.id = ir::Id(exe_.computeSets.size());
  cs.name = debug_.layer + "/" + debug_.op + (what.empty() ? "" : "/" + what);
  cs.debug = debug_;
  // The machine's own per-tile rule over the codelets' cycles.
  std::unordered_map<std::uint32_t, std::pair<std::vector<ir::Cycles>, std::vector<ir::Cycles>>> perTile;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const ir::Vertex& v = vertices[i];
    if (i >= estimated) {
      for (const ir::VertexField& f : v.fields) use(f.ref.tensor);
      continue;
    }
    const model::Codelet& codelet = model::CodeletRegistry::instance().get(v.codelet);
    model::VertexShape shape;
    for (const ir::VertexField& f : v.fields) shape.fieldSizes.push_back(f.ref.size()), use(f.ref.tensor);
    shape.params = model::orderedParams(codelet, v.params);
    auto& [workers, supervisors] = perTile[v.tile];
    if (codelet.isSupervisor())
      supervisors.push_back(codelet.cycles(shape, target_));
    else
      codelet.addWorkerCycles(shape, target_, workers);
  }
  ir::Cycles busiest = 0;
  for (auto& [tile, w] : perTile) busiest = std::max(busiest, tileCycles(w.first, w.second, target_));
  const ir::Cycles cycles = computePhaseCycles(busiest, target_);
  estimate_ += cycles;
  for (ir::Vertex& v : vertices) v.tile += tileBase_;
  cs.vertices = std::move(vertices);
  exe_.computeSets.push_back(std::move(cs));
  ir::Program p;
  p.kind = ir::ProgramKind::Execute;
  p.name = exe_.computeSets.back().name;
  p.computeSet = exe_.computeSets.back().id;
  addProgram(std::move(p));
}

}  // namespace ipusim::scheduler
