#include "model/hardware/loaded_executable.hpp"

#include "model/ir/renames.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::model::hardware {
namespace {

std::string programName(const ir::Program& p) {
  return std::string("programs[") + std::to_string(p.id) + "] '" + p.name + "' (" + ir::toString(p.kind) + ")";
}

// Structure the executor relies on: children present, ids in range, no cycle
// through Call/children (a program may not run itself).
void checkPrograms(const ir::Executable& exe) {
  const std::size_t n = exe.programs.size();
  for (std::size_t i = 0; i < n; ++i) {
    const ir::Program& p = exe.programs[i];
    if (p.id != i)
      throw std::invalid_argument("programs[" + std::to_string(i) + "]: id is " + std::to_string(p.id) +
                                  ", expected its index " + std::to_string(i));
    for (ir::Id c : p.children)
      if (c >= n)
        throw std::invalid_argument(programName(p) + ": child " + std::to_string(c) + " does not exist");
    std::size_t needed = 0;
    switch (p.kind) {
      case ir::ProgramKind::Repeat: needed = 1; break;
      case ir::ProgramKind::RepeatWhileTrue: needed = 2; break;
      case ir::ProgramKind::If: needed = 1; break;
      default: break;
    }
    if (p.children.size() < needed)
      throw std::invalid_argument(programName(p) + ": has " + std::to_string(p.children.size()) +
                                  " children, expected at least " + std::to_string(needed));
    if (p.kind == ir::ProgramKind::Call && p.callee >= n)
      throw std::invalid_argument(programName(p) + ": callee " + std::to_string(p.callee) + " does not exist");
    if (p.kind == ir::ProgramKind::Execute && p.computeSet >= exe.computeSets.size())
      throw std::invalid_argument(programName(p) + ": computeSet " + std::to_string(p.computeSet) +
                                  " does not exist");
    if (p.kind == ir::ProgramKind::StreamCopy && p.stream >= exe.streams.size())
      throw std::invalid_argument(programName(p) + ": stream " + std::to_string(p.stream) + " does not exist");
  }
  // Cycle check: depth-first, colouring programs on the current path.
  std::vector<std::uint8_t> state(n, 0);  // 0 new, 1 on path, 2 done
  std::vector<std::pair<ir::Id, std::size_t>> stack;
  auto successors = [&](ir::Id id) {
    std::vector<ir::Id> s = exe.programs[id].children;
    if (exe.programs[id].kind == ir::ProgramKind::Call) s.push_back(exe.programs[id].callee);
    return s;
  };
  for (ir::Id root = 0; root < n; ++root) {
    if (state[root]) continue;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const auto succ = successors(id);
      if (next == succ.size()) {
        state[id] = 2;
        stack.pop_back();
        continue;
      }
      const ir::Id c = succ[next++];
      if (state[c] == 1)
        throw std::invalid_argument(programName(exe.programs[c]) + ": runs itself (a cycle through " +
                                    programName(exe.programs[id]) + ")");
      if (state[c] == 0) {
        state[c] = 1;
        stack.push_back({c, 0});
      }
    }
  }
}

void checkRegion(const ir::Executable& exe, const ir::Program& p, const ir::TensorRef& ref, const char* what) {
  if (ref.tensor >= exe.tensors.size())
    throw std::invalid_argument(programName(p) + ": " + what + " refers to tensor " +
                                std::to_string(ref.tensor) + ", which does not exist");
  if (ref.begin > ref.end || ref.end > exe.tensors[ref.tensor].numElements())
    throw std::invalid_argument(programName(p) + ": " + what + " [" + std::to_string(ref.begin) + ", " +
                                std::to_string(ref.end) + ") is outside tensor '" +
                                exe.tensors[ref.tensor].name + "'");
}

}  // namespace

LoadedExecutable::LoadedExecutable(const ir::Executable& exe_, const Target& target_, bool functional_,
                                   bool fuseMatMuls, TileRange share)
    : exe(exe_), target(target_), functional(functional_), memory(exe_, target_, functional_),
      streamingMemory(exe_, target_, functional_), share_(share) {
  checkPrograms(exe);
  if (exe.mirror.active()) {
    if (functional)
      throw std::invalid_argument("executable '" + exe.name + "' mirrors its replicas (one replica's work, "
                                  "model/ir/replica_mirror.hpp): it runs in timing-only mode, not functional");
    if (exe.mirror.tilesPerReplica % target.tile.tilesPerIpu != 0)
      throw std::invalid_argument("executable '" + exe.name + "': mirror.tilesPerReplica " +
                                  std::to_string(exe.mirror.tilesPerReplica) + " is not a whole number of IPUs of " +
                                  std::to_string(target.tile.tilesPerIpu) + " tiles");
  }
  computeSets.reserve(exe.computeSets.size());
  for (std::size_t i = 0; i < exe.computeSets.size(); ++i) {
    if (exe.computeSets[i].id != i)
      throw std::invalid_argument("computeSets[" + std::to_string(i) + "]: id is " +
                                  std::to_string(exe.computeSets[i].id) + ", expected its index");
    computeSets.emplace_back(exe.computeSets[i], memory, target, exe.mirror);
  }
  if (functional) planShare();
  if (functional) checkRenamedPlans(), planRenamedExecutes();
  ExchangeFabric fabric(target);
  copyIndexOfProgram.assign(exe.programs.size(), ir::kNoId);
  conditions.resize(exe.programs.size());
  for (const ir::Program& p : exe.programs) {
    switch (p.kind) {
      case ir::ProgramKind::Copy:
        if (p.copyOf != ir::kNoId) break;  // (below, once the Copies holding regions are planned)
        copyIndexOfProgram[p.id] = ir::Id(copies.size());
        copies.push_back(fabric.plan(p, memory, exe.mirror));
        break;
      case ir::ProgramKind::RepeatWhileTrue:
      case ir::ProgramKind::If: {
        // Synthetic mode holds no data, so a data-dependent branch has no answer:
        // refuse it rather than invent one.
        if (!functional)
          throw std::invalid_argument(programName(p) +
                                      ": data-dependent control flow cannot run with synthetic data "
                                      "(no tensor values); use Repeat or functional mode");
        checkRegion(exe, p, p.condition, "condition");
        if (p.condition.size() != 1)
          throw std::invalid_argument(programName(p) + ": condition has " +
                                      std::to_string(p.condition.size()) + " elements, expected 1");
        const auto pieces = memory.pieces(p.condition);
        conditions[p.id] = {memory.pointer(pieces.at(0)), exe.tensors[p.condition.tensor].dtype};
        break;
      }
      case ir::ProgramKind::StreamCopy: {
        checkRegion(exe, p, p.tensor, "tensor");
        const ir::Stream& s = exe.streams[p.stream];
        const ir::Tensor& t = exe.tensors[p.tensor.tensor];
        if (p.tensor.size() != s.elementsPerCopy || t.dtype != s.dtype)
          throw std::invalid_argument(programName(p) + ": tensor '" + t.name + "' region of " +
                                      std::to_string(p.tensor.size()) + " " + ir::toString(t.dtype) +
                                      " elements, expected stream '" + s.name + "''s " +
                                      std::to_string(s.elementsPerCopy) + " " + ir::toString(s.dtype));
        break;
      }
      default:
        break;
    }
  }
  // A Copy moving another's regions renamed: timed as that Copy (its phase);
  // functional, it moves its own tensors' bytes, a plan of its own.
  for (const ir::Program& p : exe.programs) {
    if (p.kind != ir::ProgramKind::Copy || p.copyOf == ir::kNoId) continue;
    if (p.copyOf >= exe.programs.size() || copyIndexOfProgram[p.copyOf] == ir::kNoId)
      throw std::invalid_argument(programName(p) + ": copyOf " + std::to_string(p.copyOf) +
                                  " is not a Copy holding its own regions");
    if (functional) {
      copyIndexOfProgram[p.id] = ir::Id(copies.size());
      copies.push_back(fabric.plan(ir::withOwnRegions(exe, p), memory, exe.mirror));
    } else {
      copyIndexOfProgram[p.id] = copyIndexOfProgram[p.copyOf];
    }
  }
  for (std::size_t i = 0; i < exe.streams.size(); ++i) {
    if (exe.streams[i].id != i)
      throw std::invalid_argument("streams[" + std::to_string(i) + "]: id is " +
                                  std::to_string(exe.streams[i].id) + ", expected its index");
    streams.push_back(std::make_unique<HostStream>(exe.streams[i]));
  }
  if (functional && fuseMatMuls) {
    const bool all = share_.coversAll(target.totalTiles());
    fused = planFusedMatMuls(exe, memory, [&](const ir::FusedMatMul& f) {
      if (all) return true;
      const std::vector<RegionPiece> out = memory.pieces(f.out);
      return out.empty() || share_.contains(out.front().tile);
    });
  }
}

void LoadedExecutable::planShare() {
  if (share_.coversAll(target.totalTiles())) return;
  std::vector<bool> collective(exe.computeSets.size(), false), plain(exe.computeSets.size(), false);
  for (const ir::Program& p : exe.programs)
    if (p.kind == ir::ProgramKind::Execute) (p.collective ? collective : plain)[p.computeSet] = true;
  sharePlanOfComputeSet.assign(exe.computeSets.size(), ir::kNoId);
  for (const ir::ComputeSet& cs : exe.computeSets) {
    if (!plain[cs.id]) continue;
    if (collective[cs.id])
      throw std::invalid_argument("compute set '" + cs.name + "' runs in a collective and outside one: a share of "
                                  "the tiles cannot run it (expected a collective's compute sets of their own)");
    const bool outside = std::any_of(cs.vertices.begin(), cs.vertices.end(),
                                     [&](const ir::Vertex& v) { return !share_.contains(v.tile); });
    if (!outside) continue;
    sharePlanOfComputeSet[cs.id] = ir::Id(sharePlans.size());
    sharePlans.emplace_back(shareOf(cs), memory, target, exe.mirror);
  }
}

ir::ComputeSet LoadedExecutable::shareOf(ir::ComputeSet cs) const {
  cs.vertices.erase(std::remove_if(cs.vertices.begin(), cs.vertices.end(),
                                   [&](const ir::Vertex& v) { return !share_.contains(v.tile); }),
                    cs.vertices.end());
  return cs;
}

void LoadedExecutable::checkRenamedPlans() const {
  std::uint64_t executes = 0, copies = 0, items = 0;  // (each item is in the graph: no overflow)
  for (const ir::Program& p : exe.programs) {
    if (p.kind == ir::ProgramKind::Execute && !p.renames.empty() && p.computeSet < exe.computeSets.size())
      ++executes, items += exe.computeSets[p.computeSet].vertices.size();
    if (p.kind == ir::ProgramKind::Copy && p.copyOf < exe.programs.size())
      ++copies, items += std::max<std::size_t>(1, exe.programs[p.copyOf].regions.size());
  }
  if (items <= kMaxRenamedPlanItems) return;
  throw std::invalid_argument(
      "executable '" + exe.name + "': functional mode plans each renaming program's work on its own tensors: " +
      std::to_string(executes) + " Execute and " + std::to_string(copies) +
      " Copy programs (ir::Program::renames, copyOf) lay out " + std::to_string(items) +
      " vertices and copy regions, over the limit of " + std::to_string(kMaxRenamedPlanItems) +
      " (model/hardware/renamed_plans_limit.hpp: host memory grows with them); run timing only (--synthetic-data), "
      "or with fewer mini-batches in flight (pipeline.gradient_accumulation_count)");
}

void LoadedExecutable::planRenamedExecutes() {
  renamedPlanOfProgram.assign(exe.programs.size(), ir::kNoId);
  for (const ir::Program& p : exe.programs) {
    if (p.kind != ir::ProgramKind::Execute || p.renames.empty()) continue;
    renamedPlanOfProgram[p.id] = ir::Id(renamedPlans.size());
    ir::ComputeSet renamed = ir::renamedComputeSet(exe, p);
    if (!p.collective) renamed = shareOf(std::move(renamed));
    renamedPlans.emplace_back(renamed, memory, target, exe.mirror);
  }
}

}  // namespace ipusim::model::hardware
