#include "scheduler/pipelining.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

ir::Program sequence(const std::string& name, std::vector<ir::Id> children, const ir::DebugInfo& debug) {
  ir::Program p;
  p.kind = ir::ProgramKind::Sequence;
  p.name = name;
  p.children = std::move(children);
  p.debug = debug;
  return p;
}

std::string passName(const StagePass& p) {
  return std::string(p.backward ? "B" : "F") + std::to_string(p.stage) + "(" + std::to_string(p.miniBatch) + ")";
}

// A copy's regions, 2-D regions kept whole.
std::vector<ir::CopyRegion> regionsOf(const ir::Program& copy) {
  return copy.regions.empty() ? std::vector<ir::CopyRegion>{{copy.src, copy.dst}} : copy.regions;
}

class Pipeliner {
 public:
  Pipeliner(ir::Executable& exe, const PipelineParts& parts) : exe_(exe), parts_(parts), cycles_(parts.programCycles) {
    for (ir::Id t : {parts.images, parts.labels, parts.loss}) perMiniBatch_.insert(t);
    // The accumulate vertices of each stage (by their tile's IPU).
    accumulateOfStage_.resize(parts.forward.size());
    const ir::Program& acc = exe.programs[parts.accumulate];
    for (const ir::Vertex& v : exe.computeSets[acc.computeSet].vertices) {
      const std::uint32_t ipu = v.tile / parts.tilesPerIpu;
      if (ipu >= parts.stageOfIpu.size() || parts.stageOfIpu[ipu] >= accumulateOfStage_.size())
        throw std::logic_error("pipeline: a gradient accumulator on IPU " + std::to_string(ipu) + " runs no stage");
      accumulateOfStage_[parts.stageOfIpu[ipu]].push_back(v);
    }
  }

  PipelinedProgram build(const PipelinePlan& plan) {
    const std::uint32_t stages = std::uint32_t(parts_.forward.size());
    std::vector<ir::Id> trainingSteps;
    for (std::size_t m = 0; m < plan.firstTimeStep.size(); ++m) {
      const std::size_t end = m + 1 < plan.firstTimeStep.size() ? plan.firstTimeStep[m + 1] : plan.timeSteps.size();
      std::vector<ir::Id> timeSteps;
      for (std::size_t t = plan.firstTimeStep[m]; t < end; ++t) timeSteps.push_back(timeStep(plan.timeSteps[t], t, stages));
      ir::Program step = sequence("pipeline step " + std::to_string(m), timeSteps, {"training", "step"});
      step.marksStep = true;
      trainingSteps.push_back(exe_.addProgram(step));
    }
    PipelinedProgram out;
    out.program = exe_.addProgram(sequence("pipeline", trainingSteps, {"training", "pipeline"}));
    out.lastLoss = tensorOf(std::uint32_t(plan.firstTimeStep.size() - 1), parts_.loss);
    return out;
  }

 private:
  ir::Id timeStep(const PipelineTimeStep& step, std::size_t index, std::uint32_t stages) {
    std::vector<ir::Id> children;
    // Mini-batches entering: their infeed copies.
    for (const PipelineSlot& slot : step.slots)
      for (const StagePass& p : slot)
        if (!p.backward && p.stage == 0) {
          children.push_back(streamCopy("images", parts_.imagesStream, tensorOf(p.miniBatch, parts_.images), "input"));
          children.push_back(streamCopy("labels", parts_.labelsStream, tensorOf(p.miniBatch, parts_.labels), "input"));
        }
    std::vector<ir::Vertex> accumulate;
    std::vector<std::uint32_t> leaving;
    for (const PipelineSlot& slot : step.slots) {
      children.push_back(runSlot(slot));
      for (const StagePass& p : slot) {
        if (p.backward)
          for (ir::Vertex v : accumulateOfStage_[p.stage]) {
            for (ir::VertexField& f : v.fields) f.ref.tensor = tensorOf(p.miniBatch, f.ref.tensor);
            accumulate.push_back(std::move(v));
          }
        else if (p.stage == stages - 1)
          leaving.push_back(p.miniBatch);
      }
    }
    if (!accumulate.empty()) {
      ir::ComputeSet cs;
      cs.name = "gradient_accumulation/add";
      cs.vertices = std::move(accumulate);
      cs.debug = {"training", "gradient_accumulation"};
      // Grouped and Interleaved: each IPU adds its stage's gradients on its
      // own (internal syncs). Sequential: one addition across the IPUs, closed
      // by an external sync, as the sharded model's gradient accumulation.
      cs.independentPerIpu = parts_.sideBySide;
      ir::Program p;
      p.kind = ir::ProgramKind::Execute;
      p.name = cs.name;
      p.computeSet = exe_.addComputeSet(std::move(cs));
      p.debug = {"training", "gradient_accumulation"};
      children.push_back(exe_.addProgram(p));
    }
    if (parts_.outfeedEachMiniBatch)
      for (std::uint32_t m : leaving)
        children.push_back(streamCopy("loss", parts_.lossStream, tensorOf(m, parts_.loss), "loss"));
    return exe_.addProgram(sequence("time step " + std::to_string(index), children, {"training", "pipeline"}));
  }

  ir::Id streamCopy(const std::string& name, ir::Id stream, ir::Id tensor, const std::string& layer) {
    ir::Program p;
    p.kind = ir::ProgramKind::StreamCopy;
    p.name = name;
    p.stream = stream;
    p.tensor = {tensor, 0, exe_.tensors[tensor].numElements()};
    p.debug = {layer, name};
    return exe_.addProgram(p);
  }

  // A phase of a slot: programs of different passes run as one.
  struct Phase {
    ir::ProgramKind kind;
    ir::Cycles cycles;
    std::vector<ir::Id> programs;
  };

  // The alignment of two phase lists (each kept in order) with the fewest
  // estimated cycles: a phase runs alone (its cycles) or with one of the
  // same kind of the other list (the slower one's cycles).
  static std::vector<Phase> align(const std::vector<Phase>& a, const std::vector<Phase>& b) {
    const std::size_t n = a.size(), m = b.size();
    constexpr ir::Cycles kNone = ~ir::Cycles(0);
    std::vector<std::vector<ir::Cycles>> best(n + 1, std::vector<ir::Cycles>(m + 1, kNone));
    std::vector<std::vector<std::uint8_t>> move(n + 1, std::vector<std::uint8_t>(m + 1, 0));
    best[0][0] = 0;
    for (std::size_t i = 0; i <= n; ++i)
      for (std::size_t j = 0; j <= m; ++j) {
        if (best[i][j] == kNone) continue;
        auto relax = [&](std::size_t i2, std::size_t j2, ir::Cycles c, std::uint8_t how) {
          if (best[i][j] + c < best[i2][j2] || (best[i][j] + c == best[i2][j2] && how == 3)) {
            best[i2][j2] = best[i][j] + c;
            move[i2][j2] = how;
          }
        };
        if (i < n) relax(i + 1, j, a[i].cycles, 1);
        if (j < m) relax(i, j + 1, b[j].cycles, 2);
        if (i < n && j < m && a[i].kind == b[j].kind) relax(i + 1, j + 1, std::max(a[i].cycles, b[j].cycles), 3);
      }
    std::vector<Phase> out;
    for (std::size_t i = n, j = m; i || j;) {
      const std::uint8_t how = move[i][j];
      if (how == 1) out.push_back(a[--i]);
      else if (how == 2) out.push_back(b[--j]);
      else {
        Phase p = a[--i];
        const Phase& q = b[--j];
        p.cycles = std::max(p.cycles, q.cycles);
        p.programs.insert(p.programs.end(), q.programs.begin(), q.programs.end());
        out.push_back(std::move(p));
      }
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

  // The slot's passes side by side (see pipelining.hpp).
  ir::Id runSlot(const PipelineSlot& slot) {
    std::vector<std::vector<ir::Id>> lanes;
    std::string name;
    for (const StagePass& p : slot) {
      lanes.push_back(passPrograms(p));
      name += (name.empty() ? "" : " ") + passName(p);
    }
    return exe_.addProgram(sequence("slot " + name, sideBySide(lanes), {"training", "pipeline"}));
  }

 public:
  // Independent program lists (of Execute and Copy programs, on different
  // IPUs) run side by side: their aligned phases, merged.
  std::vector<ir::Id> sideBySide(const std::vector<std::vector<ir::Id>>& lanes) {
    std::vector<Phase> phases;
    for (const std::vector<ir::Id>& lane : lanes) {
      std::vector<Phase> next;
      for (ir::Id id : lane) next.push_back({exe_.programs[id].kind, cycles_[id], {id}});
      phases = align(phases, next);
    }
    std::vector<ir::Id> merged;
    for (const Phase& phase : phases)
      merged.push_back(phase.programs.size() == 1 ? phase.programs[0] : mergePrograms(phase.programs, phase.kind));
    return merged;
  }

 private:

  ir::Id mergePrograms(const std::vector<ir::Id>& programs, ir::ProgramKind kind) {
    ir::Program p;
    p.kind = kind;
    p.debug = exe_.programs[programs[0]].debug;
    if (kind == ir::ProgramKind::Execute) {
      ir::ComputeSet cs;
      cs.debug = exe_.computeSets[exe_.programs[programs[0]].computeSet].debug;
      for (ir::Id id : programs) {
        const ir::ComputeSet& part = exe_.computeSets[exe_.programs[id].computeSet];
        cs.name += (cs.name.empty() ? "" : " | ") + part.name;
        cs.vertices.insert(cs.vertices.end(), part.vertices.begin(), part.vertices.end());
      }
      p.name = cs.name;
      cs.independentPerIpu = true;  // the passes are on different IPUs
      p.computeSet = exe_.addComputeSet(std::move(cs));
    } else {
      for (ir::Id id : programs) {
        const ir::Program& part = exe_.programs[id];
        p.name += (p.name.empty() ? "" : " | ") + part.name;
        const std::vector<ir::CopyRegion> r = regionsOf(part);
        p.regions.insert(p.regions.end(), r.begin(), r.end());
      }
    }
    return exe_.addProgram(p);
  }

  // The leaf programs (Execute, Copy) of a pass, for its mini-batch.
  std::vector<ir::Id> passPrograms(const StagePass& pass) {
    const std::vector<ir::Id>& ops = (pass.backward ? parts_.backward : parts_.forward)[pass.stage];
    std::vector<ir::Id> out;
    for (ir::Id op : ops)
      for (ir::Id leaf : exe_.programs[op].children) {
        const ir::ProgramKind k = exe_.programs[leaf].kind;
        if (k != ir::ProgramKind::Execute && k != ir::ProgramKind::Copy)
          throw std::logic_error("pipeline: op program '" + exe_.programs[leaf].name + "' is not an Execute or a Copy");
        out.push_back(pass.miniBatch == 0 ? leaf : cloneProgram(leaf, pass.miniBatch));
      }
    return out;
  }

  ir::Id cloneProgram(ir::Id id, std::uint32_t m) {
    ir::Program p = exe_.programs[id];
    if (p.kind == ir::ProgramKind::Execute) {
      ir::ComputeSet cs = exe_.computeSets[p.computeSet];
      for (ir::Vertex& v : cs.vertices)
        for (ir::VertexField& f : v.fields) f.ref.tensor = tensorOf(m, f.ref.tensor);
      p.computeSet = exe_.addComputeSet(std::move(cs));
    } else {
      p.regions = regionsOf(p);
      p.src = p.dst = {};
      for (ir::CopyRegion& r : p.regions) {
        r.src.tensor = tensorOf(m, r.src.tensor);
        r.dst.tensor = tensorOf(m, r.dst.tensor);
      }
    }
    const ir::Id clone = exe_.addProgram(p);
    cycles_[clone] = cycles_[id];
    return clone;
  }

  // Mini-batch m's copy of tensor t: t itself for mini-batch 0 and for the
  // tensors every mini-batch shares (always-live ones but the stream buffers
  // and the loss: weights, accumulators, constants).
  ir::Id tensorOf(std::uint32_t m, ir::Id t) {
    const bool own = !exe_.tensors[t].alwaysLive || perMiniBatch_.count(t);
    if (m == 0 || !own) return t;
    auto [it, added] = clones_.emplace(std::make_pair(m, t), ir::kNoId);
    if (added) {
      ir::Tensor c = exe_.tensors[t];
      c.id = ir::Id(exe_.tensors.size());
      c.name += " [mini-batch " + std::to_string(m) + "]";
      for (ir::TileInterval& iv : c.mapping) iv.address = ir::TileInterval::kUnplaced;
      it->second = c.id;
      if (perMiniBatch_.count(t)) inFlightOnly_.push_back(c.id);
      exe_.tensors.push_back(std::move(c));
    }
    return it->second;
  }

  ir::Executable& exe_;
  const PipelineParts& parts_;

 public:
  // The stream buffers and losses of every mini-batch: live only while it is in flight.
  std::vector<ir::Id> inFlightOnly_;

 private:
  std::set<ir::Id> perMiniBatch_;
  std::vector<std::vector<ir::Vertex>> accumulateOfStage_;
  std::map<std::pair<std::uint32_t, ir::Id>, ir::Id> clones_;
  std::map<ir::Id, ir::Cycles> cycles_;  // estimated cycles of the op programs and their clones
};

void walk(const ir::Executable& exe, ir::Id id, std::size_t& step, std::vector<UseSpan>& spans,
          std::vector<bool>& used) {
  const ir::Program& p = exe.programs[id];
  auto use = [&](ir::Id t) {
    if (!used[t]) spans[t] = {step, step};
    used[t] = true;
    spans[t].second = step;
  };
  switch (p.kind) {
    case ir::ProgramKind::Execute:
      ++step;
      for (const ir::Vertex& v : exe.computeSets[p.computeSet].vertices)
        for (const ir::VertexField& f : v.fields) use(f.ref.tensor);
      break;
    case ir::ProgramKind::Copy:
      ++step;
      for (const ir::CopyRegion& r : regionsOf(p)) {
        use(r.src.tensor);
        use(r.dst.tensor);
      }
      break;
    case ir::ProgramKind::StreamCopy:
      ++step;
      use(p.tensor.tensor);
      break;
    case ir::ProgramKind::Call: walk(exe, p.callee, step, spans, used); break;
    default:
      for (ir::Id child : p.children) walk(exe, child, step, spans, used);
  }
}

}  // namespace

PipelinedProgram buildPipeline(ir::Executable& exe, const PipelinePlan& plan, const PipelineParts& parts) {
  if (parts.forward.size() != parts.backward.size() || parts.forward.empty())
    throw std::logic_error("buildPipeline: every stage needs its forward and backward ops");
  Pipeliner pipeliner(exe, parts);
  PipelinedProgram out = pipeliner.build(plan);
  // Each IPU updates its stage's weights (side by side, or the ops one
  // after another as sharding runs them), then the accumulators are zeroed.
  std::vector<std::vector<ir::Id>> updates;
  for (const std::vector<ir::Id>& stage : parts.updates) {
    updates.emplace_back();
    for (ir::Id op : stage)
      for (ir::Id leaf : exe.programs[op].children) updates.back().push_back(leaf);
  }
  std::vector<ir::Id> apply;
  if (parts.sideBySide) {
    apply = pipeliner.sideBySide(updates);
  } else {
    for (const std::vector<ir::Id>& stage : parts.updates) apply.insert(apply.end(), stage.begin(), stage.end());
  }
  apply.push_back(parts.zero);
  out.apply = exe.addProgram(sequence("apply_gradients", apply, {"training", "apply_gradients"}));
  // The stream buffers and losses live only while their mini-batch is in
  // flight; the loss the caller outfeeds once after the loop stays.
  std::vector<ir::Id> inFlight = pipeliner.inFlightOnly_;
  inFlight.insert(inFlight.end(), {parts.images, parts.labels, parts.loss});
  for (ir::Id t : inFlight) exe.tensors[t].alwaysLive = false;
  exe.tensors[out.lastLoss].alwaysLive = !parts.outfeedEachMiniBatch;
  return out;
}

std::vector<UseSpan> useSpansInOrder(const ir::Executable& exe, const std::vector<ir::Id>& roots) {
  std::vector<UseSpan> spans(exe.tensors.size(), {0, 0});
  std::vector<bool> used(exe.tensors.size(), false);
  std::size_t step = 0;
  for (ir::Id root : roots) walk(exe, root, step, spans, used);
  return spans;
}

}  // namespace ipusim::scheduler
