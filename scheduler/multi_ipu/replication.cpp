#include "scheduler/multi_ipu/replication.hpp"

#include "scheduler/multi_ipu/collectives.hpp"
#include "scheduler/multi_ipu/hierarchical_all_reduce.hpp"
#include "scheduler/multi_ipu/update_vertices.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

const ir::VertexField* field(const ir::Vertex& v, const std::string& name) {
  for (const ir::VertexField& f : v.fields)
    if (f.name == name) return &f;
  return nullptr;
}

// One Sequence `name` of the steps: for each, BSP's external sync of the
// IPUs the exchange joins, the exchange, then its compute set ("<step>/add"
// after an exchange; a step without one, the mean, is its compute set alone).
ir::Id collectiveProgram(ir::Executable& exe, const std::string& name, std::vector<CollectiveStep> steps) {
  ir::Program all;
  all.kind = ir::ProgramKind::Sequence;
  all.name = name;
  all.debug = {"training", name};
  all.collective = true;
  for (CollectiveStep& step : steps) {
    const bool exchange = !step.copy.empty();
    if (exchange) {
      ir::Program sync;
      sync.kind = ir::ProgramKind::Sync;
      sync.syncType = ir::SyncType::External;
      sync.name = name + "/" + step.what + "/sync";
      sync.debug = all.debug;
      sync.collective = true;
      all.children.push_back(exe.addProgram(sync));
      ir::Program copy;
      copy.kind = ir::ProgramKind::Copy;
      copy.name = name + "/" + step.what;
      copy.regions = std::move(step.copy);
      copy.debug = all.debug;
      copy.collective = true;
      all.children.push_back(exe.addProgram(std::move(copy)));
    }
    if (step.vertices.empty()) continue;
    ir::ComputeSet cs;
    cs.name = name + "/" + step.what + (exchange ? "/add" : "");
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
  return exe.addProgram(all);
}

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

  // A sharded update's compute set (shardOfVertex: each vertex's chunk)
  // keeps on replica r the vertices of chunk chunkOfReplica[r].
  void computeSets(const std::map<ir::Id, std::vector<std::uint32_t>>& shardOfVertex,
                   const std::vector<std::uint32_t>& chunkOfReplica) {
    for (ir::ComputeSet& cs : exe_.computeSets) {
      const auto shards = shardOfVertex.find(cs.id);
      std::vector<ir::Vertex> vertices;
      vertices.reserve(cs.vertices.size() * replicas_);
      for (std::uint32_t r = 0; r < replicas_; ++r)
        for (std::size_t i = 0; i < cs.vertices.size(); ++i) {
          if (shards != shardOfVertex.end() && shards->second.at(i) != chunkOfReplica[r]) continue;
          ir::Vertex v = cs.vertices[i];
          v.tile += r * tiles_;
          for (ir::VertexField& f : v.fields) f.ref = ref(f.ref, r);
          vertices.push_back(std::move(v));
        }
      cs.vertices = std::move(vertices);
    }
  }
  // Mirrored: the one replica laid out keeps its own chunk's vertices.
  void keepShard(const std::map<ir::Id, std::vector<std::uint32_t>>& shardOfVertex, std::uint32_t chunk) {
    for (const auto& [id, shards] : shardOfVertex) {
      std::vector<ir::Vertex>& all = exe_.computeSets.at(id).vertices;
      std::vector<ir::Vertex> kept;
      for (std::size_t i = 0; i < all.size(); ++i)
        if (shards.at(i) == chunk) kept.push_back(std::move(all[i]));
      all = std::move(kept);
    }
  }

  // `mirrorCopies`: leave every Copy as replica 0's (ir::ReplicaMirror).
  void programs(bool mirrorCopies) {
    for (ir::Program& p : exe_.programs) {
      switch (p.kind) {
        case ir::ProgramKind::Copy: {
          // (A Copy renaming another's tensors moves that Copy's regions, replicated there.)
          if (mirrorCopies || p.copyOf != ir::kNoId) break;
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
          // Unreachable from a workload: training.offload_optimizer_state is refused with replicas.
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
  auto rank = [&](std::size_t op) { return graph.isValidationOp(op) ? 2 : isWeightUpdate(graph.ops[op].kind) ? 1 : 0; };
  std::stable_sort(schedule.order.begin(), schedule.order.end(),
                   [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
}

ReplicatedUpdates replicate(ir::Executable& exe, std::uint32_t replicas, std::uint32_t ipusPerReplica,
                            std::uint32_t tilesPerReplica, const std::vector<ir::Id>& updateSequences,
                            std::uint32_t workerContexts, bool mirror,
                            const std::map<ir::Id, std::vector<std::uint32_t>>& shardOfVertex, std::uint32_t pods) {
  if (replicas <= 1) return {};
  if (pods == 0 || replicas % pods)
    throw std::invalid_argument("replication: " + std::to_string(replicas) + " replicas do not fill " +
                                std::to_string(pods) + " PODs alike (gwLink.ipusPerPod)");
  if (pods > 1 && !shardOfVertex.empty())
    throw std::invalid_argument("training.replicated_optimizer_state_sharding over " + std::to_string(pods) +
                                " PODs (gwLink.ipusPerPod) is not modelled: expected one POD, or no sharding");
  const std::uint32_t perPod = replicas / pods;  // the chunks a copy is cut into (collectives in PODs)
  // Paired receives pair tiles (2k, 2k + 1): an odd replica width would pair
  // replica k's tiles differently from replica 0's, so it is laid out in full.
  mirror = mirror && tilesPerReplica % 2 == 0;
  const std::vector<std::uint32_t> ring = ladderRing(replicas);
  // The gradients the updates read (before the layout changes the refs):
  // plain SGD's `deltas`, or a fused rule's `grad` with its weight (`data`)
  // and the per-interval chunks of the weight's mapping.
  std::vector<ir::Id> updateSets, gradients;
  std::map<ir::Id, ir::Id> weightOf;
  std::set<ir::Id> seen;
  for (ir::Id seq : updateSequences)
    for (ir::Id child : exe.programs[seq].children) {
      const ir::Program& p = exe.programs[child];
      if (p.kind != ir::ProgramKind::Execute) continue;
      updateSets.push_back(p.computeSet);
      for (const ir::Vertex& v : exe.computeSets[p.computeSet].vertices) {
        const ir::VertexField* grad = field(v, gradientField(v));
        if (!grad || !seen.insert(grad->ref.tensor).second) continue;
        gradients.push_back(grad->ref.tensor);
        if (const ir::VertexField* data = field(v, "data"); data && !isScaledAddUpdate(v)) weightOf[grad->ref.tensor] = data->ref.tensor;
      }
    }
  const bool fused = !weightOf.empty();
  if (fused && weightOf.size() != gradients.size())
    throw std::logic_error("replication: plain SGD and fused updates in one step");
  std::map<ir::Id, Chunks> chunksOf;  // per gradient (fused): its weight's per-interval chunks, one replica's
  for (const auto& [g, w] : weightOf) chunksOf[g] = perIntervalChunks(exe.tensors[w].mapping, perPod);
  const bool sharded = !shardOfVertex.empty();
  if (sharded && !fused) throw std::logic_error("replication: a sharded update that is not a fused one");

  Replicator layout(exe, replicas, tilesPerReplica);
  layout.tensors(!mirror);
  std::vector<std::uint32_t> chunkOfReplica(replicas);
  for (std::uint32_t r = 0; r < replicas; ++r) chunkOfReplica[r] = ownedChunk(ring, r);
  if (!mirror) layout.computeSets(shardOfVertex, chunkOfReplica);
  else layout.keepShard(shardOfVertex, chunkOfReplica[0]);
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

  // The mean gradient: plain SGD's update divides its scale by R; for a
  // fused rule the reduce-scatter's owner scales its chunk by 1 / R.
  if (!fused)
    for (ir::Id cs : updateSets)
      for (ir::Vertex& v : exe.computeSets[cs].vertices)
        if (isScaledAddUpdate(v)) v.params["scale"] /= double(replicas);

  // The collectives of every gradient, their steps merged (as GCL fuses them).
  std::vector<CollectiveStep> before, after;
  for (ir::Id g : gradients) {
    ir::Tensor received = exe.tensors[g];
    received.id = ir::Id(exe.tensors.size());
    received.name = exe.tensors[g].name + "/received";
    received.category = "gradients";
    received.alwaysLive = true;
    received.initialValue.clear();
    for (ir::TileInterval& iv : received.mapping) iv.address = ir::TileInterval::kUnplaced;
    exe.tensors.push_back(received);
    const ir::Tensor& gradient = exe.tensors[g];
    if (pods > 1) {  // hierarchical: in the PODs, across them over GW-Links, in the PODs
      const Chunks chunks = fused ? chunksOf.at(g) : contiguousChunks(gradient.numElements() / replicas, perPod);
      mergeSteps(before, podAllReduce(gradient, exe.tensors.back(), replicas, pods, workerContexts, chunks,
                                 fused ? 1.0 / double(replicas) : 0.0));
      continue;
    }
    if (!fused) {
      mergeSteps(before, ringAllReduce(gradient, exe.tensors.back(), ring, workerContexts));
      continue;
    }
    const Chunks& chunks = chunksOf.at(g);
    std::vector<CollectiveStep> steps = ringReduceScatter(gradient, exe.tensors.back(), ring, workerContexts, chunks);
    steps.push_back(scaleOwnedChunks(gradient, ring, workerContexts, chunks, 1.0 / double(replicas)));
    if (!sharded)
      for (CollectiveStep& step : ringAllGather(gradient, ring, chunks)) steps.push_back(std::move(step));
    mergeSteps(before, std::move(steps));
    if (sharded) mergeSteps(after, ringAllGather(exe.tensors[weightOf.at(g)], ring, chunks));
  }
  ReplicatedUpdates out;
  out.before = collectiveProgram(exe, sharded ? "reduce_scatter" : "all_reduce", std::move(before));
  if (sharded) out.after = collectiveProgram(exe, "all_gather", std::move(after));
  if (mirror) {
    exe.mirror.computeSets.resize(exe.computeSets.size(), false);
    exe.mirror.copies.resize(exe.programs.size(), false);
  }
  return out;
}

}  // namespace ipusim::scheduler
