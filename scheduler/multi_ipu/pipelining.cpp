#include "scheduler/multi_ipu/pipelining.hpp"

#include "scheduler/multi_ipu/gradient_accumulation.hpp"
#include "model/ir/renames.hpp"

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

// The tensors compute set `cs`'s fields touch, ascending, each once.
std::vector<ir::Id> tensorsOf(const ir::ComputeSet& cs) {
  std::vector<ir::Id> tensors;
  for (const ir::Vertex& v : cs.vertices)
    for (const ir::VertexField& f : v.fields) tensors.push_back(f.ref.tensor);
  std::sort(tensors.begin(), tensors.end());
  tensors.erase(std::unique(tensors.begin(), tensors.end()), tensors.end());
  return tensors;
}

// A copy's regions, 2-D regions kept whole.
std::vector<ir::CopyRegion> regionsOf(const ir::Program& copy) {
  return copy.regions.empty() ? std::vector<ir::CopyRegion>{{copy.src, copy.dst}} : copy.regions;
}

// The tensors a Copy holding its regions reads or writes, ascending, each once.
std::vector<ir::Id> tensorsOf(const ir::Program& copy) {
  std::vector<ir::Id> tensors;
  for (const ir::CopyRegion& r : regionsOf(copy)) tensors.insert(tensors.end(), {r.src.tensor, r.dst.tensor});
  std::sort(tensors.begin(), tensors.end());
  tensors.erase(std::unique(tensors.begin(), tensors.end()), tensors.end());
  return tensors;
}

class Pipeliner {
 public:
  Pipeliner(ir::Executable& exe, const PipelineParts& parts) : exe_(exe), parts_(parts) {
    for (ir::Id t : {parts.images, parts.labels, parts.loss}) perMiniBatch_.insert(t);
    // The accumulate vertices of each stage (by their tile's IPU).
    accumulateOfStage_.resize(parts.forward.size());
    ipuOfStage_.assign(parts.forward.size(), ~0u);
    accumulationSetOfStage_.assign(parts.forward.size(), ir::kNoId);
    for (std::uint32_t ipu = 0; ipu < parts.stageOfIpu.size(); ++ipu)
      if (parts.stageOfIpu[ipu] < ipuOfStage_.size()) ipuOfStage_[parts.stageOfIpu[ipu]] = ipu;
    // (Evaluate and predict accumulate nothing.)
    if (parts.accumulate == ir::kNoId) return;
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

  // The stages' update op Sequences side by side: one Sequence running its
  // IPUs apart, each IPU its stage's updates.
  ir::Id updatesApart(const std::vector<std::vector<ir::Id>>& updates) {
    std::vector<ir::Id> leaves;
    for (const std::vector<ir::Id>& stage : updates)
      for (ir::Id op : stage)
        for (ir::Id leaf : exe_.programs[op].children) leaves.push_back(leaf);
    ir::Program apart = sequence("updates", leaves, {"training", "apply_gradients"});
    apart.ipusApart = true;
    return exe_.addProgram(apart);
  }

 private:
  ir::Id timeStep(const PipelineTimeStep& step, std::size_t index, std::uint32_t stages) {
    std::vector<ir::Id> children;
    // Mini-batches entering: their infeed copies.
    for (const PipelineSlot& slot : step.slots)
      for (const StagePass& p : slot)
        if (!p.backward && p.stage == 0) {
          children.push_back(streamCopy("images", parts_.imagesStream, tensorOf(p.miniBatch, parts_.images), "input"));
          if (parts_.labels != ir::kNoId)  // (predict streams no labels)
            children.push_back(streamCopy("labels", parts_.labelsStream, tensorOf(p.miniBatch, parts_.labels), "input"));
        }
    std::vector<ir::Vertex> accumulate;  // (the mini-batch-0 form: sequentialAccumulation renames it)
    std::vector<std::uint32_t> leaving;
    for (const PipelineSlot& slot : step.slots) {
      children.push_back(parts_.sideBySide ? slotApart(slot) : slotAlone(slot));
      for (const StagePass& p : slot) {
        if (p.backward && !parts_.sideBySide)
          accumulate.insert(accumulate.end(), accumulateOfStage_[p.stage].begin(), accumulateOfStage_[p.stage].end());
        else if (!p.backward && p.stage == stages - 1)
          leaving.push_back(p.miniBatch);
      }
    }
    // Sequential: one addition across the IPUs, closed by an external sync,
    // as the sharded model's gradient accumulation.
    if (!accumulate.empty()) children.push_back(sequentialAccumulation(step, std::move(accumulate)));
    if (parts_.outfeedEachMiniBatch)
      for (std::uint32_t m : leaving)
        children.push_back(streamCopy(parts_.outfeedName, parts_.lossStream, tensorOf(m, parts_.loss), parts_.outfeedName));
    return exe_.addProgram(sequence("time step " + std::to_string(index), children, {"training", "pipeline"}));
  }

  // Sequential: the time step's backward passes' additions into the
  // accumulators (`vertices`, for mini-batch 0), one compute set laid out
  // once for each list of stages and run on the mini-batch's gradients.
  ir::Id sequentialAccumulation(const PipelineTimeStep& step, std::vector<ir::Vertex> vertices) {
    std::vector<std::uint32_t> stages;
    std::uint32_t m = 0;
    for (const PipelineSlot& slot : step.slots)
      for (const StagePass& p : slot)
        if (p.backward) {
          if (!stages.empty() && p.miniBatch != m)
            throw std::logic_error("pipeline: a sequential time step adds gradients of two mini-batches");
          stages.push_back(p.stage);
          m = p.miniBatch;
        }
    auto [it, added] = sequentialAccumulationSets_.emplace(stages, ir::kNoId);
    if (added) it->second = accumulationSet("gradient_accumulation/add", std::move(vertices));
    return renamedExecute("gradient_accumulation/add", it->second, m);
  }

  // Backward pass `p`'s additions of its weight gradients into the
  // accumulators: its stage's compute set, laid out once.
  ir::Id accumulationOf(const StagePass& p) {
    ir::Id& cs = accumulationSetOfStage_[p.stage];
    if (cs == ir::kNoId)
      cs = accumulationSet("gradient_accumulation/add stage " + std::to_string(p.stage), accumulateOfStage_[p.stage]);
    return renamedExecute("gradient_accumulation/add " + passName(p), cs, p.miniBatch);
  }

  ir::Id accumulationSet(const std::string& name, std::vector<ir::Vertex> vertices) {
    ir::ComputeSet cs;
    cs.name = name;
    cs.vertices = std::move(vertices);
    cs.debug = {"training", "gradient_accumulation"};
    return exe_.addComputeSet(std::move(cs));
  }

  // An Execute of compute set `cs` on mini-batch m's tensors.
  ir::Id renamedExecute(const std::string& name, ir::Id cs, std::uint32_t m) {
    ir::Program p;
    p.kind = ir::ProgramKind::Execute;
    p.name = name;
    p.debug = exe_.computeSets[cs].debug;
    p.computeSet = cs;
    p.renames = renamesFor(cs, m);
    return exe_.addProgram(p);
  }

  // Compute set `cs`'s tensors each renamed to mini-batch m's copy (none for
  // mini-batch 0 and for the tensors every mini-batch shares), by tensor.
  std::vector<ir::TensorRename> renamesFor(ir::Id cs, std::uint32_t m) {
    auto [it, added] = tensorsOfSet_.emplace(cs, std::vector<ir::Id>{});
    if (added) it->second = tensorsOf(exe_.computeSets[cs]);
    std::vector<ir::TensorRename> renames;
    for (ir::Id t : it->second)
      if (const ir::Id c = tensorOf(m, t); c != t) renames.push_back({t, c});
    return renames;
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

  // Sequential: the slot's one pass, its programs in order, as sharding runs them.
  ir::Id slotAlone(const PipelineSlot& slot) {
    std::vector<ir::Id> programs;
    std::string name;
    for (const StagePass& p : slot) {
      for (ir::Id leaf : passLeaves(p))
        programs.push_back(p.miniBatch == 0 ? leaf : forMiniBatch(leaf, p.miniBatch, nullptr));
      name += (name.empty() ? "" : " ") + passName(p);
    }
    return exe_.addProgram(sequence("slot " + name, programs, {"training", "pipeline"}));
  }

  // Grouped and Interleaved: the slot's passes side by side (see pipelining.hpp).
  ir::Id slotApart(const PipelineSlot& slot) {
    std::vector<ir::Id> stageInputs, passes;
    std::string name;
    for (const StagePass& p : slot) {
      for (ir::Id leaf : passLeaves(p)) {
        // Mini-batch 0's program reading the stage's own copies of other
        // IPUs' tensors; a later mini-batch's renames it to its own tensors.
        const ir::Id own = readingLocalCopiesOnce(leaf, p.stage, p.miniBatch, stageInputs);
        passes.push_back(p.miniBatch == 0 ? own : forMiniBatch(own, p.miniBatch, &stageInputs));
      }
      if (p.backward) passes.push_back(accumulationOf(p));
      name += (name.empty() ? "" : " ") + passName(p);
    }
    std::vector<ir::Id> children;
    if (!stageInputs.empty()) children.push_back(interStageCopy(stageInputs));
    children.insert(children.end(), passes.begin(), passes.end());
    ir::Program seq = sequence("slot " + name, children, {"training", "pipeline"});
    seq.ipusApart = true;
    return exe_.addProgram(seq);
  }

  // Whether tensor t has elements on another IPU than `ipu`. (Asked for
  // every region of every pass's copies: each tensor's mapping is read once.)
  bool offIpu(ir::Id t, std::uint32_t ipu) {
    auto [it, added] = onlyIpuOf_.emplace(t, kNoIpu);
    const std::vector<ir::TileInterval>& mapping = exe_.tensors[t].mapping;
    if (added && !mapping.empty()) {
      const std::uint32_t first = mapping.front().tile / parts_.tilesPerIpu;
      const bool one = std::all_of(mapping.begin(), mapping.end(),
                                   [&](const ir::TileInterval& iv) { return iv.tile / parts_.tilesPerIpu == first; });
      it->second = one ? first : kSeveralIpus;
    }
    return it->second != kNoIpu && it->second != ipu;
  }

  // Copy program `id` of a pass of `stage` reading, instead of a tensor of
  // another stage's IPU, that tensor's copy on the stage's own IPU (the
  // first pass of the stage to read it adds its copy to `stageInputs`): the
  // stage's input, or the activation its weight gradient needs, crossed the
  // IPU-Links once at a slot boundary, as Poplar's inter-IPU copies between
  // pipeline stages (TF keeps a stage's inputs on its IPU for its backward
  // pass). Anything else: `id`.
  // readingLocalCopies of mini-batch 0's `leaf`, made when mini-batch 0's
  // pass runs it (every stage runs mini-batch 0 first) and kept for the others.
  ir::Id readingLocalCopiesOnce(ir::Id leaf, std::uint32_t stage, std::uint32_t m, std::vector<ir::Id>& stageInputs) {
    auto [it, added] = readingLocal_.emplace(std::make_pair(leaf, stage), ir::kNoId);
    if (added) {
      if (m != 0) throw std::logic_error("pipeline: mini-batch " + std::to_string(m) + " ran before mini-batch 0");
      it->second = readingLocalCopies(leaf, stage, stageInputs);
    }
    return it->second;
  }

  ir::Id readingLocalCopies(ir::Id id, std::uint32_t stage, std::vector<ir::Id>& stageInputs) {
    if (exe_.programs[id].kind != ir::ProgramKind::Copy) return id;
    ir::Program local = exe_.programs[id];  // a copy: localCopy() adds programs
    const std::uint32_t ipu = ipuOfStage_[stage];
    std::vector<ir::CopyRegion> regions = regionsOf(local);
    std::set<ir::Id> written;
    for (const ir::CopyRegion& r : regions) written.insert(r.dst.tensor);
    bool changed = false;
    for (ir::CopyRegion& r : regions) {
      // Left as they are: a tensor the copy also writes, and one every
      // mini-batch shares (a copy taken once would go stale across updates).
      if (!offIpu(r.src.tensor, ipu) || written.count(r.src.tensor) || shared(r.src.tensor)) continue;
      r.src.tensor = localCopy(r.src.tensor, stage, stageInputs);
      changed = true;
    }
    if (!changed) return id;
    local.regions = std::move(regions);
    local.src = local.dst = {};
    return exe_.addProgram(local);
  }

  // Tensor t's copy on stage `stage`'s IPU, laid out as t tile by tile
  // (poputil::cloneToIpu: "the mapping of tensor elements to tiles is
  // preserved", each tile's elements on the same tile of the other IPU).
  ir::Id localCopy(ir::Id t, std::uint32_t stage, std::vector<ir::Id>& stageInputs) {
    auto [it, added] = localCopies_.emplace(std::make_pair(t, stage), ir::kNoId);
    if (!added) return it->second;
    ir::Tensor c = exe_.tensors[t];
    c.id = ir::Id(exe_.tensors.size());
    c.name += " [stage " + std::to_string(stage) + " copy]";
    c.alwaysLive = false;
    c.initialValue.clear();
    c.drawnInit = {};
    const std::uint32_t base = ipuOfStage_[stage] * parts_.tilesPerIpu;
    for (ir::TileInterval& iv : c.mapping) {
      iv.tile = base + iv.tile % parts_.tilesPerIpu;
      iv.address = ir::TileInterval::kUnplaced;
    }
    const std::uint64_t n = c.numElements();
    exe_.tensors.push_back(std::move(c));
    it->second = exe_.tensors.back().id;
    localOrigin_.emplace(it->second, std::make_pair(t, stage));
    ir::Program copy;
    copy.kind = ir::ProgramKind::Copy;
    copy.name = exe_.tensors[t].name + " -> stage " + std::to_string(stage);
    copy.src = {t, 0, n};
    copy.dst = {it->second, 0, n};
    copy.debug = {"training", "inter_ipu_copy"};
    stageInputs.push_back(exe_.addProgram(copy));
    return it->second;
  }

  // The slot's inter-stage copies as one multi-region Copy: one exchange
  // over the IPU-Links that joins the IPUs it involves.
  ir::Id interStageCopy(const std::vector<ir::Id>& copies) {
    if (copies.size() == 1) return copies[0];
    ir::Program p;
    p.kind = ir::ProgramKind::Copy;
    p.debug = exe_.programs[copies[0]].debug;
    p.name = "inter_ipu_copy";
    for (ir::Id id : copies) {
      const std::vector<ir::CopyRegion> r = regionsOf(exe_.programs[id]);
      p.regions.insert(p.regions.end(), r.begin(), r.end());
    }
    return exe_.addProgram(p);
  }

  // The leaf programs (Execute, Copy) of a pass, as mini-batch 0 runs them.
  std::vector<ir::Id> passLeaves(const StagePass& pass) const {
    const std::vector<ir::Id>& ops = (pass.backward ? parts_.backward : parts_.forward)[pass.stage];
    std::vector<ir::Id> out;
    for (ir::Id op : ops)
      for (ir::Id leaf : exe_.programs[op].children) {
        const ir::ProgramKind k = exe_.programs[leaf].kind;
        if (k != ir::ProgramKind::Execute && k != ir::ProgramKind::Copy)
          throw std::logic_error("pipeline: op program '" + exe_.programs[leaf].name + "' is not an Execute or a Copy");
        out.push_back(leaf);
      }
    return out;
  }

  // Program `id` of mini-batch 0 for mini-batch m: the same compute set or
  // the same Copy's regions, run on m's tensors (the stage is laid out once).
  // A stage's own copy of another IPU's tensor becomes that of m's tensor,
  // made in this slot (`stageInputs`) when m's pass first reads it.
  ir::Id forMiniBatch(ir::Id id, std::uint32_t m, std::vector<ir::Id>* stageInputs) {
    ir::Program p = exe_.programs[id];
    if (p.kind == ir::ProgramKind::Execute) {
      p.renames = renamesFor(p.computeSet, m);
      return exe_.addProgram(p);
    }
    ir::Program copy;
    copy.kind = ir::ProgramKind::Copy;
    copy.name = p.name;
    copy.debug = p.debug;
    copy.collective = p.collective;
    copy.copyOf = id;
    auto [it, added] = tensorsOfCopy_.emplace(id, std::vector<ir::Id>{});
    if (added) it->second = tensorsOf(p);
    for (ir::Id t : it->second) {
      const auto local = localOrigin_.find(t);
      ir::Id to = ir::kNoId;
      if (local == localOrigin_.end()) {
        to = tensorOf(m, t);
      } else {
        if (!stageInputs) throw std::logic_error("pipeline: a stage's copy of a tensor outside a slot's passes");
        to = localCopy(tensorOf(m, local->second.first), local->second.second, *stageInputs);
      }
      if (to != t) copy.renames.push_back({t, to});
    }
    return exe_.addProgram(copy);
  }

  bool shared(ir::Id t) const { return exe_.tensors[t].alwaysLive && !perMiniBatch_.count(t); }

  const std::vector<ir::Id>& tensorsOfSetOnce(ir::Id cs) {
    auto [it, added] = tensorsOfSet_.emplace(cs, std::vector<ir::Id>{});
    if (added) it->second = tensorsOf(exe_.computeSets[cs]);
    return it->second;
  }

 public:
  // See pipelineItemsPerMiniBatch.
  PipelineCopyItems itemsPerMiniBatch() {
    std::set<ir::Id> tensors;
    PipelineCopyItems items;
    for (const auto* side : {&parts_.forward, &parts_.backward})
      for (const std::vector<ir::Id>& ops : *side)
        for (ir::Id op : ops)
          for (ir::Id leaf : exe_.programs[op].children) {
            const ir::Program& p = exe_.programs[leaf];
            std::vector<ir::Id> touched;
            if (p.kind == ir::ProgramKind::Copy) {
              touched = tensorsOf(p);
              items.renamedWork += std::max<std::size_t>(1, p.regions.size());  // (a renamed copy: copyOf)
            } else if (p.kind == ir::ProgramKind::Execute) {
              touched = tensorsOfSetOnce(p.computeSet);
              if (std::any_of(touched.begin(), touched.end(), [&](ir::Id t) { return !shared(t); }))
                items.renamedWork += exe_.computeSets[p.computeSet].vertices.size();
            }
            ++items.programs;  // (each leaf runs again as mini-batch m's program)
            for (ir::Id t : touched)
              if (!shared(t)) ++items.tensorRenames;
            tensors.insert(touched.begin(), touched.end());
          }
    // Each backward pass adds its gradients into the accumulators (accumulationOf), renamed.
    if (parts_.accumulate != ir::kNoId && std::any_of(parts_.backward.begin(), parts_.backward.end(),
                                                      [](const std::vector<ir::Id>& ops) { return !ops.empty(); })) {
      const ir::Id cs = exe_.programs[parts_.accumulate].computeSet;
      const std::vector<ir::Id>& touched = tensorsOfSetOnce(cs);
      if (std::any_of(touched.begin(), touched.end(), [&](ir::Id t) { return !shared(t); }))
        items.renamedWork += exe_.computeSets[cs].vertices.size();
    }
    for (ir::Id t : tensors)
      if (!shared(t)) items.tensorIntervals += exe_.tensors[t].mapping.size(), ++items.tensors;
    return items;
  }

 private:

  // Mini-batch m's copy of tensor t: t itself for mini-batch 0 and for the
  // tensors every mini-batch shares (always-live ones but the stream buffers
  // and the loss: weights, accumulators, constants).
  ir::Id tensorOf(std::uint32_t m, ir::Id t) {
    if (m == 0 || shared(t)) return t;
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
  std::vector<std::uint32_t> ipuOfStage_;
  std::map<std::pair<std::uint32_t, ir::Id>, ir::Id> clones_;
  std::map<std::pair<ir::Id, std::uint32_t>, ir::Id> localCopies_;  // (tensor, stage) -> its copy on the stage's IPU
  static constexpr std::uint32_t kNoIpu = ~0u, kSeveralIpus = ~0u - 1;
  std::map<ir::Id, std::uint32_t> onlyIpuOf_;  // tensor -> its one IPU, kSeveralIpus, or kNoIpu (no elements)
  std::map<ir::Id, std::vector<ir::Id>> tensorsOfSet_;              // compute set -> its tensors (tensorsOf)
  std::map<ir::Id, std::vector<ir::Id>> tensorsOfCopy_;             // Copy -> its tensors (tensorsOf)
  std::map<std::pair<ir::Id, std::uint32_t>, ir::Id> readingLocal_;  // (leaf, stage) -> readingLocalCopies
  std::map<ir::Id, std::pair<ir::Id, std::uint32_t>> localOrigin_;  // a stage's copy -> (its tensor, the stage)
  std::vector<ir::Id> accumulationSetOfStage_;                       // by stage: its additions' compute set
  std::map<std::vector<std::uint32_t>, ir::Id> sequentialAccumulationSets_;  // stages -> their additions
};

void walk(const ir::Executable& exe, ir::Id id, std::size_t& step, std::vector<UseSpan>& spans,
          std::vector<bool>& used, std::map<ir::Id, std::vector<ir::Id>>& tensorsOfSet) {
  const ir::Program& p = exe.programs[id];
  auto use = [&](ir::Id t) {
    if (!used[t]) spans[t] = {step, step};
    used[t] = true;
    spans[t].second = step;
  };
  switch (p.kind) {
    case ir::ProgramKind::Execute: {
      ++step;
      auto [it, added] = tensorsOfSet.emplace(p.computeSet, std::vector<ir::Id>{});
      if (added) it->second = tensorsOf(exe.computeSets[p.computeSet]);
      for (ir::Id t : it->second) use(ir::renamedTensor(p, t));
      break;
    }
    case ir::ProgramKind::Copy:
      ++step;
      for (const ir::CopyRegion& r : ir::renamedRegions(exe, p)) {
        use(r.src.tensor);
        use(r.dst.tensor);
      }
      break;
    case ir::ProgramKind::StreamCopy:
    case ir::ProgramKind::RemoteCopy:
      ++step;
      use(p.tensor.tensor);
      break;
    case ir::ProgramKind::Call: walk(exe, p.callee, step, spans, used, tensorsOfSet); break;
    default:
      for (ir::Id child : p.children) walk(exe, child, step, spans, used, tensorsOfSet);
  }
}

}  // namespace

PipelinedProgram buildPipeline(ir::Executable& exe, const PipelinePlan& plan, const PipelineParts& parts) {
  if (parts.forward.size() != parts.backward.size() || parts.forward.empty())
    throw std::logic_error("buildPipeline: every stage needs its forward and backward ops");
  Pipeliner pipeliner(exe, parts);
  PipelinedProgram out = pipeliner.build(plan);
  // The stream buffers and losses live only while their mini-batch is in
  // flight; the loss the caller outfeeds once after the loop stays.
  std::vector<ir::Id> inFlight = pipeliner.inFlightOnly_;
  for (ir::Id t : {parts.images, parts.labels, parts.loss})
    if (t != ir::kNoId) inFlight.push_back(t);
  for (ir::Id t : inFlight) exe.tensors[t].alwaysLive = false;
  exe.tensors[out.lastLoss].alwaysLive = !parts.outfeedEachMiniBatch;
  if (parts.zero == ir::kNoId) return out;  // evaluate, predict: no update
  // Each IPU updates its stage's weights (side by side, or the ops one
  // after another as sharding runs them), then the accumulators are zeroed.
  std::vector<ir::Id> apply;
  if (parts.sideBySide) {
    apply.push_back(pipeliner.updatesApart(parts.updates));
  } else {
    for (const std::vector<ir::Id>& stage : parts.updates) apply.insert(apply.end(), stage.begin(), stage.end());
  }
  apply.push_back(parts.zero);
  out.apply = exe.addProgram(sequence("apply_gradients", apply, {"training", "apply_gradients"}));
  return out;
}

PipelineCopyItems pipelineItemsPerMiniBatch(ir::Executable& exe, const PipelineParts& parts) {
  return Pipeliner(exe, parts).itemsPerMiniBatch();
}

std::vector<UseSpan> useSpansInOrder(const ir::Executable& exe, const std::vector<ir::Id>& roots) {
  std::vector<UseSpan> spans(exe.tensors.size(), {0, 0});
  std::vector<bool> used(exe.tensors.size(), false);
  std::size_t step = 0;
  std::map<ir::Id, std::vector<ir::Id>> tensorsOfSet;
  for (ir::Id root : roots) walk(exe, root, step, spans, used, tensorsOfSet);
  return spans;
}

}  // namespace ipusim::scheduler
