#include "scheduler/multi_ipu/replication.hpp"

#include "scheduler/multi_ipu/collectives.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

bool isUpdate(const ir::Vertex& v) { return v.codelet.rfind("ScaledAdd", 0) == 0; }

class Replicator {
 public:
  Replicator(ir::Executable& exe, std::uint32_t replicas, std::uint32_t tilesPerReplica)
      : exe_(exe), replicas_(replicas), tiles_(tilesPerReplica) {
    for (const ir::Tensor& t : exe.tensors) elements_.push_back(t.numElements());
  }

  ir::TensorRef ref(const ir::TensorRef& r, std::uint32_t replica) const {
    const std::uint64_t at = replica * elements_[r.tensor];
    return {r.tensor, at + r.begin, at + r.end};
  }

  // `withValues` false (mirrored, timing only): no initial values, nothing reads them.
  void tensors(bool withValues) {
    for (ir::Tensor& t : exe_.tensors) {
      const std::uint64_t n = t.numElements();
      std::vector<ir::TileInterval> mapping;
      for (std::uint32_t r = 0; r < replicas_; ++r)
        for (const ir::TileInterval& iv : t.mapping)
          mapping.push_back({iv.tile + r * tiles_, iv.begin + r * n, iv.end + r * n, iv.address});
      t.mapping = std::move(mapping);
      // Every replica starts from the same weights (TF broadcasts replica 0's).
      std::vector<double> init = withValues ? ir::initialValues(t) : std::vector<double>{};
      t.drawnInit.reset();
      t.initialValue.clear();
      if (!init.empty())
        for (std::uint32_t r = 0; r < replicas_; ++r) t.initialValue.insert(t.initialValue.end(), init.begin(), init.end());
      t.shape.insert(t.shape.begin(), replicas_);
    }
  }

  void computeSets() {
    for (ir::ComputeSet& cs : exe_.computeSets) {
      std::vector<ir::Vertex> vertices;
      vertices.reserve(cs.vertices.size() * replicas_);
      for (std::uint32_t r = 0; r < replicas_; ++r)
        for (ir::Vertex v : cs.vertices) {
          v.tile += r * tiles_;
          for (ir::VertexField& f : v.fields) f.ref = ref(f.ref, r);
          vertices.push_back(std::move(v));
        }
      cs.vertices = std::move(vertices);
    }
  }

  // `mirrorCopies`: leave every Copy as replica 0's (ir::ReplicaMirror).
  void programs(bool mirrorCopies) {
    for (ir::Program& p : exe_.programs) {
      switch (p.kind) {
        case ir::ProgramKind::Copy: {
          if (mirrorCopies) break;
          std::vector<ir::CopyRegion> one = p.regions.empty() ? std::vector<ir::CopyRegion>{{p.src, p.dst}} : p.regions;
          p.regions.clear();
          for (std::uint32_t r = 0; r < replicas_; ++r)
            for (ir::CopyRegion region : one) {
              region.src = ref(region.src, r);
              region.dst = ref(region.dst, r);
              p.regions.push_back(region);
            }
          p.src = p.dst = {};
          break;
        }
        case ir::ProgramKind::StreamCopy: {
          const std::uint64_t n = elements_[p.tensor.tensor];
          if (p.tensor.begin != 0 || p.tensor.end != n)
            throw std::logic_error("replication: stream copy '" + p.name + "' moves part of a tensor");
          p.tensor.end = n * replicas_;
          break;
        }
        case ir::ProgramKind::RemoteCopy:
          // Unreachable from a workload: only plain SGD, which keeps no state, is replicated.
          throw std::logic_error("replication: remote copy '" + p.name + "': remote buffers are not laid out per replica");
        case ir::ProgramKind::RepeatWhileTrue:
        case ir::ProgramKind::If:
          throw std::invalid_argument("replication: program '" + p.name +
                                      "' branches on a tensor; replicated graphs branch on no value here");
        default: break;
      }
    }
    for (ir::Stream& s : exe_.streams) s.elementsPerCopy *= replicas_;
  }

  // Each replica's products, over its elements of the tensors. A mirrored
  // executable is timing only: it computes no product.
  void fusedMatMuls(bool mirror) {
    std::vector<ir::FusedMatMul> all;
    if (!mirror)
      for (const ir::FusedMatMul& f : exe_.fusedMatMuls)
        for (std::uint32_t r = 0; r < replicas_; ++r) {
          ir::FusedMatMul one = f;
          one.a = ref(f.a, r), one.b = ref(f.b, r), one.out = ref(f.out, r);
          all.push_back(std::move(one));
        }
    exe_.fusedMatMuls = std::move(all);
  }

 private:
  ir::Executable& exe_;
  std::uint32_t replicas_, tiles_;
  std::vector<std::uint64_t> elements_;
};

}  // namespace

void moveUpdatesLast(const OpGraph& graph, Schedule& schedule) {
  // The training step's other ops, its updates, then a validation pass's ops
  // (which read the updated weights: OpGraph::firstValidationOp).
  auto rank = [&](std::size_t op) { return graph.isValidationOp(op) ? 2 : graph.ops[op].kind == OpKind::SgdUpdate ? 1 : 0; };
  std::stable_sort(schedule.order.begin(), schedule.order.end(),
                   [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
}

ir::Id replicate(ir::Executable& exe, std::uint32_t replicas, std::uint32_t ipusPerReplica, std::uint32_t tilesPerReplica,
                 const std::vector<ir::Id>& updateSequences, std::uint32_t workerContexts, bool mirror) {
  if (replicas <= 1) return ir::kNoId;
  // Paired receives pair tiles (2k, 2k + 1): an odd replica width would pair
  // replica k's tiles differently from replica 0's, so it is laid out in full.
  mirror = mirror && tilesPerReplica % 2 == 0;
  // The gradients the updates read (before the layout changes the refs).
  std::vector<ir::Id> updateSets, gradients;
  std::set<ir::Id> seen;
  for (ir::Id seq : updateSequences)
    for (ir::Id child : exe.programs[seq].children) {
      const ir::Program& p = exe.programs[child];
      if (p.kind != ir::ProgramKind::Execute) continue;
      updateSets.push_back(p.computeSet);
      for (const ir::Vertex& v : exe.computeSets[p.computeSet].vertices)
        if (isUpdate(v))
          for (const ir::VertexField& f : v.fields)
            if (f.name == "deltas" && seen.insert(f.ref.tensor).second) gradients.push_back(f.ref.tensor);
    }

  Replicator layout(exe, replicas, tilesPerReplica);
  layout.tensors(!mirror);
  if (!mirror) layout.computeSets();
  layout.programs(mirror);
  layout.fusedMatMuls(mirror);
  exe.ipusPerReplica = ipusPerReplica;
  if (mirror) {
    // Everything so far is one replica's program; the collectives below are
    // laid out in full (appended, so their flags are false).
    exe.mirror.replicas = replicas;
    exe.mirror.tilesPerReplica = tilesPerReplica;
    exe.mirror.computeSets.assign(exe.computeSets.size(), true);
    for (const ir::Program& p : exe.programs) exe.mirror.copies.push_back(p.kind == ir::ProgramKind::Copy);
  }

  // The mean gradient: the all-reduce sums, the update divides.
  for (ir::Id cs : updateSets)
    for (ir::Vertex& v : exe.computeSets[cs].vertices)
      if (isUpdate(v)) v.params["scale"] /= double(replicas);

  // One all-reduce of every gradient, their steps merged.
  std::vector<CollectiveStep> merged;
  const std::vector<std::uint32_t> ring = ladderRing(replicas);
  for (ir::Id g : gradients) {
    ir::Tensor received = exe.tensors[g];
    received.id = ir::Id(exe.tensors.size());
    received.name = exe.tensors[g].name + "/received";
    received.category = "gradients";
    received.alwaysLive = true;
    received.initialValue.clear();
    for (ir::TileInterval& iv : received.mapping) iv.address = ir::TileInterval::kUnplaced;
    exe.tensors.push_back(received);
    std::vector<CollectiveStep> steps = ringAllReduce(exe.tensors[g], exe.tensors.back(), ring, workerContexts);
    if (merged.empty()) merged.resize(steps.size());
    for (std::size_t s = 0; s < steps.size(); ++s) {
      merged[s].what = steps[s].what;
      merged[s].copy.insert(merged[s].copy.end(), steps[s].copy.begin(), steps[s].copy.end());
      if (merged[s].vertices.empty())
        merged[s].vertices = std::move(steps[s].vertices);
      else
        merged[s].vertices.insert(merged[s].vertices.end(), std::make_move_iterator(steps[s].vertices.begin()),
                                  std::make_move_iterator(steps[s].vertices.end()));
    }
  }
  ir::Program all;
  all.kind = ir::ProgramKind::Sequence;
  all.name = "all_reduce";
  all.debug = {"training", "all_reduce"};
  all.collective = true;
  for (CollectiveStep& step : merged) {
    // BSP: the IPUs the exchange joins synchronise first.
    ir::Program sync;
    sync.kind = ir::ProgramKind::Sync;
    sync.syncType = ir::SyncType::External;
    sync.name = "all_reduce/" + step.what + "/sync";
    sync.debug = all.debug;
    sync.collective = true;
    all.children.push_back(exe.addProgram(sync));
    ir::Program copy;
    copy.kind = ir::ProgramKind::Copy;
    copy.name = "all_reduce/" + step.what;
    copy.regions = std::move(step.copy);
    copy.debug = all.debug;
    copy.collective = true;
    all.children.push_back(exe.addProgram(std::move(copy)));
    if (step.vertices.empty()) continue;
    ir::ComputeSet cs;
    cs.name = "all_reduce/" + step.what + "/add";
    cs.vertices = std::move(step.vertices);
    cs.debug = all.debug;
    ir::Program execute;
    execute.kind = ir::ProgramKind::Execute;
    execute.name = cs.name;
    execute.debug = all.debug;
    execute.collective = true;
    execute.computeSet = exe.addComputeSet(std::move(cs));
    all.children.push_back(exe.addProgram(execute));
  }
  const ir::Id id = exe.addProgram(all);
  if (mirror) {
    exe.mirror.computeSets.resize(exe.computeSets.size(), false);
    exe.mirror.copies.resize(exe.programs.size(), false);
  }
  return id;
}

}  // namespace ipusim::scheduler
