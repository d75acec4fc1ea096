#include "scheduler/lowering.hpp"

#include "model/codelets/codelet.hpp"
#include "model/hardware/tile.hpp"
#include "scheduler/matmul_plan.hpp"
#include "scheduler/tile_placement.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

using ir::Id;
using ir::TensorRef;
using Params = std::map<std::string, double>;

constexpr std::uint64_t kGrain = 2;  // elements: one 64-bit vector of floats

struct Slot {  // where replica r of a value lives
  Id tensor;
  std::uint64_t offset;
  TensorRef ref(std::uint64_t begin, std::uint64_t end) const { return {tensor, offset + begin, offset + end}; }
};

class Lowerer {
 public:
  Lowerer(const OpGraph& g, const model::Target& target, std::uint32_t tiles, std::uint64_t budget)
      : g_(g), target_(target), tiles_(tiles), budget_(budget),
        valueTensor_(g.values.size(), ir::kNoId), valuePlacement_(g.values.size()) {}

  LoweredStep run(const Schedule& schedule) {
    out_.stepChildren.resize(2);  // StreamCopy images, labels: filled in at the end
    for (std::size_t opIndex : schedule.order) lowerOp(g_.ops[opIndex]);
    out_.images = valueTensor_[g_.images];
    out_.labels = valueTensor_[g_.labels];
    out_.loss = valueTensor_[g_.loss];
    for (std::size_t w : g_.weights) out_.weightTensors.push_back(valueTensor_[w]);
    return std::move(out_);
  }

 private:
  // ---- IR construction ----
  Id addTensor(const std::string& name, std::vector<std::uint64_t> shape, ir::DType dtype, const std::string& category,
               bool alwaysLive, const Placement& placement) {
    ir::Tensor t;
    t.id = Id(out_.exe.tensors.size());
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.category = category;
    t.alwaysLive = alwaysLive;
    t.debug = debug_;
    for (const PlacedRange& r : normalized(placement)) t.mapping.push_back({r.tile, r.begin, r.end});
    out_.exe.tensors.push_back(std::move(t));
    out_.useSpan.push_back({current(), current()});
    return out_.exe.tensors.back().id;
  }
  std::size_t current() const { return out_.stepChildren.size(); }
  void use(Id tensor) {
    auto& span = out_.useSpan[tensor];
    span.first = std::min(span.first, current());
    span.second = std::max(span.second, current());
  }
  Id addProgram(ir::Program p) {
    p.id = Id(out_.exe.programs.size());
    if (p.debug.layer.empty()) p.debug = debug_;
    out_.exe.programs.push_back(std::move(p));
    return out_.exe.programs.back().id;
  }

  // Elements [begin, end) of a tensor, as ranges on tiles.
  Placement segments(const TensorRef& ref) const {
    Placement p;
    for (const auto& iv : out_.exe.tensors[ref.tensor].mapping) {
      const std::uint64_t b = std::max(iv.begin, ref.begin), e = std::min(iv.end, ref.end);
      if (b < e) p.push_back({b - ref.begin, e - ref.begin, iv.tile});
    }
    return p;
  }

  void copy(const TensorRef& src, const TensorRef& dst, const std::string& what) { copy({{src, dst}}, what); }

  // One Copy program (one exchange phase) moving every region pair.
  void copy(const std::vector<ir::CopyRegion>& regions, const std::string& what) {
    ir::Program p;
    p.kind = ir::ProgramKind::Copy;
    p.name = debug_.layer + "/" + debug_.op + "/" + what;
    if (regions.size() == 1) p.src = regions[0].src, p.dst = regions[0].dst;
    else p.regions = regions;
    opChildren_.push_back(addProgram(p));
    // Estimate: per tile, bytes sent and received across tiles, summed over
    // the regions (one phase), and bytes copied within a tile.
    std::map<std::uint32_t, std::uint64_t> sent, received, local;
    for (const ir::CopyRegion& r : regions) {
      use(r.src.tensor);
      use(r.dst.tensor);
      const Placement s = segments(r.src), d = segments(r.dst);
      const std::uint64_t bytes = ir::sizeOf(out_.exe.tensors[r.src.tensor].dtype);
      for (const PlacedRange& dr : d)
        for (std::uint64_t b = dr.begin; b < dr.end;) {
          auto it = std::upper_bound(s.begin(), s.end(), b,
                                     [](std::uint64_t v, const PlacedRange& pr) { return v < pr.end; });
          const std::uint64_t len = std::min(dr.end - b, it->end - b);
          if (it->tile != dr.tile) sent[it->tile] += len * bytes, received[dr.tile] += len * bytes;
          else local[dr.tile] += len * bytes;
          b += len;
        }
    }
    std::uint64_t worst = 0;
    for (auto& [t, v] : sent) worst = std::max(worst, v);
    for (auto& [t, v] : received) worst = std::max(worst, v);
    const std::uint64_t bpc = target_.exchange.bytesPerCycle, vectorBytes = std::max<std::uint32_t>(1, target_.tile.vectorBytes);
    std::uint64_t localWorst = 0;
    for (auto& [t, v] : local) localWorst = std::max(localWorst, (v + vectorBytes - 1) / vectorBytes);
    out_.estimatedStepCycles += (worst + bpc - 1) / bpc + localWorst + (worst ? target_.exchange.latencyCycles : 0) +
                                target_.sync.internalCycles;
  }

  struct VertexBuilder {
    std::vector<ir::Vertex> vertices;
    void add(const std::string& codelet, std::uint32_t tile, std::vector<ir::VertexField> fields, Params params = {}) {
      vertices.push_back({codelet, tile, std::move(fields), std::move(params)});
    }
  };

  void execute(VertexBuilder& vb, const std::string& suffix = "") {
    ir::ComputeSet cs;
    cs.id = Id(out_.exe.computeSets.size());
    cs.name = debug_.layer + "/" + debug_.op + suffix;
    cs.debug = debug_;
    // Estimate with the model's own per-tile rule.
    std::map<std::uint32_t, std::pair<std::vector<ir::Cycles>, std::vector<ir::Cycles>>> perTile;
    for (const ir::Vertex& v : vb.vertices) {
      const auto& codelet = model::CodeletRegistry::instance().get(v.codelet);
      model::VertexShape shape;
      for (const auto& f : v.fields) shape.fieldSizes.push_back(f.ref.size()), use(f.ref.tensor);
      shape.params = model::orderedParams(codelet, v.params);
      auto& [workers, supervisors] = perTile[v.tile];
      (codelet.isSupervisor() ? supervisors : workers).push_back(codelet.cycles(shape, target_));
    }
    ir::Cycles worst = 0;
    for (auto& [tile, w] : perTile)
      worst = std::max(worst, model::hardware::tileComputeCycles(w.first, w.second, target_.tile));
    out_.estimatedStepCycles += worst + target_.sync.internalCycles;
    cs.vertices = std::move(vb.vertices);
    out_.exe.computeSets.push_back(std::move(cs));
    ir::Program p;
    p.kind = ir::ProgramKind::Execute;
    p.name = out_.exe.computeSets.back().name;
    p.computeSet = out_.exe.computeSets.back().id;
    opChildren_.push_back(addProgram(p));
  }

  // ---- placement of values ----
  std::string categoryOf(const Value& v) const {
    switch (v.kind) {
      case ValueKind::Input: return "stream_buffers";
      case ValueKind::Weight: return "weights";
      case ValueKind::Gradient: return "gradients";
      case ValueKind::Loss: return "activations";
      default: return "activations";
    }
  }

  Id define(std::size_t value, const Placement& p) {
    const Value& v = g_.values[value];
    const Id t = addTensor(v.name, v.shape, v.isInt ? ir::DType::Int : ir::DType::Float, categoryOf(v), v.alwaysLive(), p);
    if (!v.initialValue.empty()) out_.exe.tensors[t].initialValue = v.initialValue;
    valueTensor_[value] = t;
    valuePlacement_[value] = normalized(p);
    return t;
  }

  // The value, placed as each replica asks: the value's own tensor where its
  // placement matches (or where it has none yet), else a clone filled by one
  // (broadcast) Copy.
  std::vector<Slot> realize(std::size_t value, const std::vector<Placement>& replicas) {
    const Value& v = g_.values[value];
    const std::uint64_t n = v.numElements();
    std::vector<Slot> slots(replicas.size());
    std::size_t first = 0;
    if (valueTensor_[value] == ir::kNoId) define(value, replicas[0]);
    if (valuePlacement_[value] == normalized(replicas[0])) slots[0] = {valueTensor_[value], 0}, first = 1;
    if (first == replicas.size()) return slots;
    Placement clone;
    const std::uint64_t count = replicas.size() - first;
    for (std::size_t r = first; r < replicas.size(); ++r)
      for (PlacedRange p : replicas[r]) {
        p.begin += (r - first) * n, p.end += (r - first) * n;
        clone.push_back(p);
      }
    const Id t = addTensor(v.name + (count > 1 ? "/replicas" : "/relaid"), {count * n},
                           v.isInt ? ir::DType::Int : ir::DType::Float, "temporaries", false, clone);
    // A Copy moves src to a dst of the same size, so replicas are made by
    // doubling: the value into replica 0, then replicas [0, h) into [h, 2h):
    // ceil(log2(count)) + 1 exchange phases instead of count.
    copy({valueTensor_[value], 0, n}, {t, 0, n}, count > 1 ? "replicate" : "relayout");
    for (std::uint64_t done = 1; done < count;) {
      const std::uint64_t more = std::min(done, count - done);
      copy({t, 0, more * n}, {t, done * n, (done + more) * n}, "replicate");
      done += more;
    }
    for (std::size_t r = first; r < replicas.size(); ++r) slots[r] = {t, (r - first) * n};
    return slots;
  }
  Slot realizeOne(std::size_t value, const Placement& p) { return realize(value, {p})[0]; }

  // A value computed by this op: defined with its placement.
  Slot produce(std::size_t value, const Placement& p) { return {define(value, p), 0}; }

  // Where most of a value's elements are (small tensors are kept together there).
  std::uint32_t homeTile(std::size_t value) const {
    std::map<std::uint32_t, std::uint64_t> count;
    for (const auto& r : valuePlacement_[value]) count[r.tile] += r.end - r.begin;
    std::uint32_t best = 0;
    std::uint64_t most = 0;
    for (auto& [t, c] : count) if (c > most) most = c, best = t;
    return best;
  }

  // ---- ops ----
  void lowerOp(const Op& op) {
    debug_ = {op.layer, op.name};
    opChildren_.clear();
    switch (op.kind) {
      case OpKind::MatMul: lowerMatMul(op); break;
      case OpKind::AddBias: lowerAddBias(op); break;
      case OpKind::Relu: lowerElementwise(op, "Relu", {"in"}, "out"); break;
      case OpKind::ReluGrad: lowerElementwise(op, "ReluGrad", {"activation", "gradIn"}, "gradOut"); break;
      case OpKind::SoftmaxCrossEntropy: lowerSoftmaxCrossEntropy(op); break;
      case OpKind::SoftmaxCrossEntropyGrad: lowerSoftmaxCrossEntropyGrad(op); break;
      case OpKind::ReduceRows: lowerReduceRows(op); break;
      case OpKind::MeanLoss: lowerMeanLoss(op); break;
      case OpKind::SgdUpdate: lowerSgdUpdate(op); break;
    }
    ir::Program seq;
    seq.kind = ir::ProgramKind::Sequence;
    seq.name = op.layer + "/" + op.name;
    seq.children = opChildren_;
    out_.stepChildren.push_back(addProgram(seq));
  }

  std::uint32_t tileOf(std::uint64_t i, std::uint64_t j, std::uint64_t l, const MatMulPlan& p) const {
    return std::uint32_t(((i * p.pn + j) * p.pk + l) % tiles_);
  }

  void lowerMatMul(const Op& op) {
    const Value& av = g_.values[op.inputs[0]];
    const Value& bv = g_.values[op.inputs[1]];
    MatMulShape s;
    s.transposeA = op.transposeA, s.transposeB = op.transposeB;
    s.m = op.transposeA ? av.shape[1] : av.shape[0];
    s.k = op.transposeA ? av.shape[0] : av.shape[1];
    s.n = op.transposeB ? bv.shape[0] : bv.shape[1];
    s.aResident = valueTensor_[op.inputs[0]] == ir::kNoId;
    s.bResident = valueTensor_[op.inputs[1]] == ir::kNoId;
    auto tilesHolding = [&](std::size_t value) {
      std::set<std::uint32_t> tiles;
      for (const PlacedRange& r : valuePlacement_[value]) tiles.insert(r.tile);
      return std::uint64_t(tiles.size());
    };
    s.aSourceTiles = tilesHolding(op.inputs[0]);
    s.bSourceTiles = tilesHolding(op.inputs[1]);
    const MatMulPlan plan = planMatMul(s, target_, tiles_, budget_);
    const auto mBlocks = evenSplit(s.m, plan.pm), nBlocks = evenSplit(s.n, plan.pn), kBlocks = evenSplit(s.k, plan.pk);

    // Operand placements: a replicated over the column blocks, b over the row blocks.
    auto matrixBlock = [](Placement& p, bool transposed, std::uint64_t rows, std::uint64_t cols,
                          std::pair<std::uint64_t, std::uint64_t> r, std::pair<std::uint64_t, std::uint64_t> c,
                          std::uint32_t tile) {
      // Logical block rows r x cols c of op(x); stored transposed: rows are columns.
      const std::uint64_t storedCols = transposed ? rows : cols;
      auto [sr, sc] = transposed ? std::make_pair(c, r) : std::make_pair(r, c);
      for (std::uint64_t row = sr.first; row < sr.second; ++row)
        p.push_back({row * storedCols + sc.first, row * storedCols + sc.second, tile});
    };
    std::vector<Placement> aReplicas(nBlocks.size()), bReplicas(mBlocks.size());
    for (std::size_t i = 0; i < mBlocks.size(); ++i)
      for (std::size_t j = 0; j < nBlocks.size(); ++j)
        for (std::size_t l = 0; l < kBlocks.size(); ++l) {
          const std::uint32_t t = tileOf(i, j, l, plan);
          matrixBlock(aReplicas[j], s.transposeA, s.m, s.k, mBlocks[i], kBlocks[l], t);
          matrixBlock(bReplicas[i], s.transposeB, s.k, s.n, kBlocks[l], nBlocks[j], t);
        }
    // a's replica j holds each (i, l) block once; b's replica i each (l, j) block once.
    for (auto& p : aReplicas) p = normalized(p);
    for (auto& p : bReplicas) p = normalized(p);
    if (plan.gathered) {
      lowerGatheredMatMul(op, s, plan, mBlocks, nBlocks, aReplicas[0], bReplicas[0]);
      return;
    }
    // Blocks of a were added once per j into replica j only; b once per i into replica i only.
    const std::vector<Slot> aSlots = realize(op.inputs[0], aReplicas);
    const std::vector<Slot> bSlots = realize(op.inputs[1], bReplicas);

    auto aRegion = [&](std::size_t j, std::uint64_t r0, std::uint64_t r1, std::pair<std::uint64_t, std::uint64_t> kb) {
      return s.transposeA ? aSlots[j].ref(kb.first * s.m + r0, (kb.second - 1) * s.m + r1)
                          : aSlots[j].ref(r0 * s.k + kb.first, (r1 - 1) * s.k + kb.second);
    };
    auto bRegion = [&](std::size_t i, std::uint64_t c0, std::uint64_t c1, std::pair<std::uint64_t, std::uint64_t> kb) {
      return s.transposeB ? bSlots[i].ref(c0 * s.k + kb.first, (c1 - 1) * s.k + kb.second)
                          : bSlots[i].ref(kb.first * s.n + c0, (kb.second - 1) * s.n + c1);
    };
    struct Sub { std::uint64_t r0, r1, c0, c1; std::size_t i, j; };
    std::vector<Sub> subs;  // vertex output regions of one k block, block by block
    for (std::size_t i = 0; i < mBlocks.size(); ++i)
      for (std::size_t j = 0; j < nBlocks.size(); ++j) {
        const auto [mb0, mb1] = mBlocks[i];
        const auto [nb0, nb1] = nBlocks[j];
        for (std::uint64_t r = mb0; r < mb1; r += plan.rowVertices ? 1 : mb1 - mb0)
          for (std::uint64_t c = nb0; c < nb1; c += plan.colVertices ? 1 : nb1 - nb0)
            subs.push_back({r, plan.rowVertices ? r + 1 : mb1, c, plan.colVertices ? c + 1 : nb1, i, j});
      }
    auto outRange = [&](const Sub& u) { return std::make_pair(u.r0 * s.n + u.c0, (u.r1 - 1) * s.n + u.c1); };
    auto params = [&](const Sub& u, std::pair<std::uint64_t, std::uint64_t> kb) {
      return Params{{"m", double(u.r1 - u.r0)}, {"k", double(kb.second - kb.first)}, {"n", double(u.c1 - u.c0)},
                    {"transposeA", s.transposeA}, {"transposeB", s.transposeB}, {"accumulate", 0}};
    };
    const std::size_t outValue = op.outputs[0];
    VertexBuilder vb;
    if (plan.pk == 1) {
      Placement p;
      for (const Sub& u : subs) p.push_back({outRange(u).first, outRange(u).second, tileOf(u.i, u.j, 0, plan)});
      const Slot o = produce(outValue, p);
      for (const Sub& u : subs)
        vb.add("MatMulPartial", tileOf(u.i, u.j, 0, plan),
               {{"a", aRegion(u.j, u.r0, u.r1, kBlocks[0])}, {"b", bRegion(u.i, u.c0, u.c1, kBlocks[0])},
                {"out", o.ref(outRange(u).first, outRange(u).second)}},
               params(u, kBlocks[0]));
      execute(vb);
      return;
    }
    // k split: partials laid out [sub][l][elements of sub], so that each
    // sub's pk partials are one contiguous pk x size region for its reducer.
    std::vector<std::uint64_t> subOffset;
    std::uint64_t total = 0;
    Placement partialPlacement, gatheredPlacement, outPlacement;
    for (std::size_t u = 0; u < subs.size(); ++u) {
      const std::uint64_t size = outRange(subs[u]).second - outRange(subs[u]).first;
      subOffset.push_back(total);
      const std::uint32_t reducer = tileOf(subs[u].i, subs[u].j, u % plan.pk, plan);
      for (std::size_t l = 0; l < kBlocks.size(); ++l)
        partialPlacement.push_back({total + l * size, total + (l + 1) * size, tileOf(subs[u].i, subs[u].j, l, plan)});
      gatheredPlacement.push_back({total, total + plan.pk * size, reducer});
      outPlacement.push_back({outRange(subs[u]).first, outRange(subs[u]).second, reducer});
      total += plan.pk * size;
    }
    const Value& ov = g_.values[outValue];
    const Id partials = addTensor(ov.name + "/partials", {total}, ir::DType::Float, "temporaries", false, partialPlacement);
    for (std::size_t u = 0; u < subs.size(); ++u) {
      const std::uint64_t size = outRange(subs[u]).second - outRange(subs[u]).first;
      for (std::size_t l = 0; l < kBlocks.size(); ++l)
        vb.add("MatMulPartial", tileOf(subs[u].i, subs[u].j, l, plan),
               {{"a", aRegion(subs[u].j, subs[u].r0, subs[u].r1, kBlocks[l])},
                {"b", bRegion(subs[u].i, subs[u].c0, subs[u].c1, kBlocks[l])},
                {"out", {partials, subOffset[u] + l * size, subOffset[u] + (l + 1) * size}}},
               params(subs[u], kBlocks[l]));
    }
    execute(vb);
    const Id gathered = addTensor(ov.name + "/partials_gathered", {total}, ir::DType::Float, "temporaries", false, gatheredPlacement);
    copy({partials, 0, total}, {gathered, 0, total}, "gather_partials");
    const Slot o = produce(outValue, outPlacement);
    VertexBuilder reduce;
    for (std::size_t u = 0; u < subs.size(); ++u) {
      const auto [b, e] = outRange(subs[u]);
      reduce.add("ReduceSum", gatheredPlacement[u].tile,
                 {{"in", {gathered, subOffset[u], subOffset[u] + plan.pk * (e - b)}}, {"out", o.ref(b, e)}},
                 {{"rows", double(plan.pk)}, {"cols", double(e - b)}, {"axis", 0}, {"scale", 1}, {"accumulate", 0}});
    }
    execute(reduce, "/reduce");
  }

  // [0, n) split evenly, in order, over the distinct tiles of `p` (in their order of first use).
  static Placement spreadOver(std::uint64_t n, const Placement& p) {
    std::vector<std::uint32_t> tiles;
    std::set<std::uint32_t> seen;
    for (const PlacedRange& r : p)
      if (seen.insert(r.tile).second) tiles.push_back(r.tile);
    Placement out;
    const auto parts = evenSplit(n, std::min<std::uint64_t>(tiles.size(), std::max<std::uint64_t>(1, n / kGrain)));
    for (std::size_t i = 0; i < parts.size(); ++i) out.push_back({parts[i].first, parts[i].second, tiles[i]});
    return out;
  }

  // The elements [begin, end) of `tensor` all on `tile`?
  bool onTileWhole(Id tensor, std::uint64_t begin, std::uint64_t end, std::uint32_t tile) const {
    for (const PlacedRange& r : segments({tensor, begin, end}))
      if (r.tile != tile) return false;
    return true;
  }

  // pk = 1, one vertex per (i, j) block on its tile. Each tile's op(a) rows
  // and op(b) columns are gathered (kept in their stored orientation) into
  // contiguous tile-local buffers by ONE multi-region Copy; a block already
  // contiguous on its tile is read in place. An operand with no tensor yet
  // is first placed as its blocks of column block 0 / row block 0.
  void lowerGatheredMatMul(const Op& op, const MatMulShape& s, const MatMulPlan& plan,
                           const std::vector<std::pair<std::uint64_t, std::uint64_t>>& mBlocks,
                           const std::vector<std::pair<std::uint64_t, std::uint64_t>>& nBlocks,
                           const Placement& aHome, const Placement& bHome) {
    const std::size_t av = op.inputs[0], bv = op.inputs[1];
    // A value with no tensor yet (a weight) is split evenly, in order, over
    // the tiles of its home blocks: few ranges per tile keep its update and
    // the gather regions few.
    if (valueTensor_[av] == ir::kNoId) define(av, spreadOver(g_.values[av].numElements(), aHome));
    if (valueTensor_[bv] == ir::kNoId) define(bv, spreadOver(g_.values[bv].numElements(), bHome));
    const Id aT = valueTensor_[av], bT = valueTensor_[bv];
    struct Block { std::uint64_t r0, r1, c0, c1; std::uint32_t tile; TensorRef a, b; };
    std::vector<Block> blocks;
    std::vector<ir::CopyRegion> regions;
    Placement aBufPlacement, bBufPlacement;
    std::uint64_t aBufSize = 0, bBufSize = 0;
    // One operand block as stored: `runs` runs of `len` elements, the first
    // at `first`, then every `stride`; read in place when it is one run on the tile.
    struct Run { std::uint64_t first, stride, runs, len; };
    for (std::size_t i = 0; i < mBlocks.size(); ++i)
      for (std::size_t j = 0; j < nBlocks.size(); ++j) {
        const auto [r0, r1] = mBlocks[i];
        const auto [c0, c1] = nBlocks[j];
        blocks.push_back({r0, r1, c0, c1, tileOf(i, j, 0, plan), {}, {}});
      }
    // First pass: decide per block whether each operand is read in place.
    std::vector<Run> aRun(blocks.size()), bRun(blocks.size());
    std::vector<bool> aInPlace(blocks.size()), bInPlace(blocks.size());
    for (std::size_t u = 0; u < blocks.size(); ++u) {
      const Block& k = blocks[u];
      const std::uint64_t mb = k.r1 - k.r0, nb = k.c1 - k.c0;
      aRun[u] = s.transposeA ? Run{k.r0, s.m, s.k, mb} : Run{k.r0 * s.k, 0, 1, mb * s.k};
      bRun[u] = s.transposeB ? Run{k.c0 * s.k, 0, 1, nb * s.k} : Run{k.c0, s.n, s.k, nb};
      auto inPlace = [&](Id t, const Run& r) {
        const bool oneRun = r.runs == 1 || r.len == r.stride;
        return oneRun && onTileWhole(t, r.first, r.first + r.runs * r.len, k.tile);
      };
      aInPlace[u] = inPlace(aT, aRun[u]);
      bInPlace[u] = inPlace(bT, bRun[u]);
      if (!aInPlace[u]) aBufPlacement.push_back({aBufSize, aBufSize + mb * s.k, k.tile}), aBufSize += mb * s.k;
      if (!bInPlace[u]) bBufPlacement.push_back({bBufSize, bBufSize + nb * s.k, k.tile}), bBufSize += nb * s.k;
    }
    const Value& aValue = g_.values[av];
    const Value& bValue = g_.values[bv];
    const Id aGathered = aBufSize ? addTensor(aValue.name + "/gathered", {aBufSize}, ir::DType::Float, "temporaries", false, aBufPlacement) : ir::kNoId;
    const Id bGathered = bBufSize ? addTensor(bValue.name + "/gathered", {bBufSize}, ir::DType::Float, "temporaries", false, bBufPlacement) : ir::kNoId;
    std::uint64_t aAt = 0, bAt = 0;
    auto gather = [&](Id src, const Run& r, Id buf, std::uint64_t& at) {
      const TensorRef whole{buf, at, at + r.runs * r.len};
      if (r.runs == 1 || r.len == r.stride) {
        regions.push_back({{src, r.first, r.first + r.runs * r.len}, whole});
      } else {
        for (std::uint64_t q = 0; q < r.runs; ++q)
          regions.push_back({{src, r.first + q * r.stride, r.first + q * r.stride + r.len}, {buf, at + q * r.len, at + (q + 1) * r.len}});
      }
      at += r.runs * r.len;
      return whole;
    };
    for (std::size_t u = 0; u < blocks.size(); ++u) {
      Block& k = blocks[u];
      k.a = aInPlace[u] ? TensorRef{aT, aRun[u].first, aRun[u].first + aRun[u].runs * aRun[u].len} : gather(aT, aRun[u], aGathered, aAt);
      k.b = bInPlace[u] ? TensorRef{bT, bRun[u].first, bRun[u].first + bRun[u].runs * bRun[u].len} : gather(bT, bRun[u], bGathered, bAt);
    }
    if (!regions.empty()) copy(regions, "gather_operands");

    // Output: in place when every block is contiguous in it; else the blocks
    // are computed into per-tile buffers and copied row by row (one Copy) into
    // the output, split evenly in order over the same tiles (a row-segment
    // placement would give later ops a vertex per segment).
    bool outContiguous = true;
    Placement outPlacement;
    for (const Block& k : blocks) {
      outContiguous = outContiguous && contiguous(k.r0, k.r1, k.c0, k.c1, s.n);
      outPlacement.push_back({k.r0 * s.n + k.c0, (k.r1 - 1) * s.n + k.c1, k.tile});
    }
    if (!outContiguous) outPlacement = spreadOver(s.m * s.n, outPlacement);
    const Slot o = produce(op.outputs[0], outPlacement);
    Id blockBuf = ir::kNoId;
    if (!outContiguous) {
      Placement bp;
      std::uint64_t at = 0;
      for (const Block& k : blocks) bp.push_back({at, at + (k.r1 - k.r0) * (k.c1 - k.c0), k.tile}), at += (k.r1 - k.r0) * (k.c1 - k.c0);
      blockBuf = addTensor(g_.values[op.outputs[0]].name + "/blocks", {at}, ir::DType::Float, "temporaries", false, bp);
    }
    VertexBuilder vb;
    std::vector<ir::CopyRegion> place;
    std::uint64_t at = 0;
    for (const Block& k : blocks) {
      const std::uint64_t mb = k.r1 - k.r0, nb = k.c1 - k.c0;
      TensorRef out = o.ref(k.r0 * s.n + k.c0, (k.r1 - 1) * s.n + k.c1);
      if (!outContiguous) {
        out = {blockBuf, at, at + mb * nb};
        for (std::uint64_t r = 0; r < mb; ++r)
          place.push_back({{blockBuf, at + r * nb, at + (r + 1) * nb}, o.ref((k.r0 + r) * s.n + k.c0, (k.r0 + r) * s.n + k.c1)});
        at += mb * nb;
      }
      vb.add("MatMulPartial", k.tile, {{"a", k.a}, {"b", k.b}, {"out", out}},
             {{"m", double(mb)}, {"k", double(s.k)}, {"n", double(nb)},
              {"transposeA", s.transposeA}, {"transposeB", s.transposeB}, {"accumulate", 0}});
    }
    execute(vb);
    if (!place.empty()) copy(place, "place_blocks");
  }

  // Elementwise: the output where the first input is, the other inputs brought
  // there; each tile's ranges split over the worker contexts.
  void lowerElementwise(const Op& op, const std::string& codelet, const std::vector<std::string>& inFields,
                        const std::string& outField) {
    const Placement p = valuePlacement_[op.inputs[0]];
    std::vector<Slot> ins;
    for (std::size_t in : op.inputs) ins.push_back(realizeOne(in, p));
    const Slot o = produce(op.outputs[0], p);
    VertexBuilder vb;
    for (const PlacedRange& r : p)
      for (auto [b, e] : chunks(r.begin, r.end, target_.tile.workerContexts, kGrain)) {
        std::vector<ir::VertexField> fields;
        for (std::size_t f = 0; f < ins.size(); ++f) fields.push_back({inFields[f], ins[f].ref(b, e)});
        fields.push_back({outField, o.ref(b, e)});
        vb.add(codelet, r.tile, fields);
      }
    execute(vb);
  }

  void lowerAddBias(const Op& op) {
    const Placement p = valuePlacement_[op.inputs[0]];
    const std::uint64_t cols = g_.values[op.inputs[1]].numElements();
    std::vector<std::uint32_t> tilesUsed;
    for (const auto& r : p) if (std::find(tilesUsed.begin(), tilesUsed.end(), r.tile) == tilesUsed.end()) tilesUsed.push_back(r.tile);
    std::vector<Placement> biasReplicas;
    for (std::uint32_t t : tilesUsed) biasReplicas.push_back(onTile(cols, t));
    const std::vector<Slot> bias = realize(op.inputs[1], biasReplicas);
    const Slot in = realizeOne(op.inputs[0], p);
    const Slot o = produce(op.outputs[0], p);
    VertexBuilder vb;
    for (const PlacedRange& r : p) {
      const Slot& b = bias[std::find(tilesUsed.begin(), tilesUsed.end(), r.tile) - tilesUsed.begin()];
      for (std::uint64_t e = r.begin; e < r.end;) {
        const std::uint64_t c0 = e % cols;
        if (c0 == 0 && r.end - e >= cols) {  // whole rows, split over the workers
          const std::uint64_t rows = (r.end - e) / cols;
          for (auto [rb, re] : chunks(0, rows, target_.tile.workerContexts, 1))
            vb.add("AddBias", r.tile, {{"in", in.ref(e + rb * cols, e + re * cols)}, {"bias", b.ref(0, cols)},
                                       {"out", o.ref(e + rb * cols, e + re * cols)}},
                   {{"rows", double(re - rb)}, {"cols", double(cols)}});
          e += rows * cols;
        } else {  // part of a row
          const std::uint64_t len = std::min(r.end - e, cols - c0);
          vb.add("AddBias", r.tile, {{"in", in.ref(e, e + len)}, {"bias", b.ref(c0, c0 + len)}, {"out", o.ref(e, e + len)}},
                 {{"rows", 1}, {"cols", double(len)}});
          e += len;
        }
      }
    }
    execute(vb);
  }

  // The loss works on whole rows of a small tensor: kept together on one tile.
  void lowerSoftmaxCrossEntropy(const Op& op) {
    const std::uint32_t tile = homeTile(op.inputs[0]);
    lossTile_ = tile;
    const Value& logits = g_.values[op.inputs[0]];
    const std::uint64_t rows = logits.shape[0], classes = logits.shape[1];
    const Slot x = realizeOne(op.inputs[0], onTile(rows * classes, tile));
    const Slot labels = realizeOne(op.inputs[1], onTile(rows, tile));
    const Slot probs = produce(op.outputs[0], onTile(rows * classes, tile));
    const Slot loss = produce(op.outputs[1], onTile(rows, tile));
    VertexBuilder vb;
    for (auto [b, e] : chunks(0, rows, target_.tile.workerContexts, 1))
      vb.add("SoftmaxCrossEntropy", tile,
             {{"logits", x.ref(b * classes, e * classes)}, {"labels", labels.ref(b, e)},
              {"probs", probs.ref(b * classes, e * classes)}, {"loss", loss.ref(b, e)}},
             {{"rows", double(e - b)}, {"classes", double(classes)}});
    execute(vb);
  }

  void lowerSoftmaxCrossEntropyGrad(const Op& op) {
    const Value& pv = g_.values[op.inputs[0]];
    const std::uint64_t rows = pv.shape[0], classes = pv.shape[1];
    const Slot probs = realizeOne(op.inputs[0], onTile(rows * classes, lossTile_));
    const Slot labels = realizeOne(op.inputs[1], onTile(rows, lossTile_));
    const Slot grad = produce(op.outputs[0], onTile(rows * classes, lossTile_));
    VertexBuilder vb;
    for (auto [b, e] : chunks(0, rows, target_.tile.workerContexts, 1))
      vb.add("SoftmaxCrossEntropyGrad", lossTile_,
             {{"probs", probs.ref(b * classes, e * classes)}, {"labels", labels.ref(b, e)},
              {"grad", grad.ref(b * classes, e * classes)}},
             {{"rows", double(e - b)}, {"classes", double(classes)}, {"scale", op.scale}});
    execute(vb);
  }

  void lowerMeanLoss(const Op& op) {
    const std::uint64_t n = g_.values[op.inputs[0]].numElements();
    const Slot in = realizeOne(op.inputs[0], onTile(n, lossTile_));
    const Slot out = produce(op.outputs[0], onTile(1, lossTile_));
    VertexBuilder vb;
    vb.add("ReduceSum", lossTile_, {{"in", in.ref(0, n)}, {"out", out.ref(0, 1)}},
           {{"rows", 1}, {"cols", double(n)}, {"axis", 1}, {"scale", op.scale}, {"accumulate", 0}});
    execute(vb);
  }

  // Bias gradient: the column sums of a [batch, units] gradient, on the tile
  // of the bias so that its update is local. One vertex: a column range of
  // several rows is not one contiguous region, so it cannot be split over
  // workers without a relayout.
  void lowerReduceRows(const Op& op) {
    const Value& gv = g_.values[op.inputs[0]];
    const std::uint64_t rows = gv.shape[0], cols = gv.shape[1];
    // the bias value is the SGD partner of this gradient: find its tile
    std::uint32_t tile = homeTile(op.inputs[0]);
    for (std::size_t w : g_.weights)
      if (g_.values[w].layer == op.layer && g_.values[w].shape.size() == 1 && valueTensor_[w] != ir::kNoId) tile = homeTile(w);
    const Slot in = realizeOne(op.inputs[0], onTile(rows * cols, tile));
    const Slot out = produce(op.outputs[0], onTile(cols, tile));
    VertexBuilder vb;
    vb.add("ReduceSum", tile, {{"in", in.ref(0, rows * cols)}, {"out", out.ref(0, cols)}},
           {{"rows", double(rows)}, {"cols", double(cols)}, {"axis", 0}, {"scale", 1}, {"accumulate", 0}});
    execute(vb);
  }

  void lowerSgdUpdate(const Op& op) {
    const std::size_t weight = op.inputs[0];
    const Placement p = valuePlacement_[weight];
    const Slot grad = realizeOne(op.inputs[1], p);
    const Id w = valueTensor_[weight];
    VertexBuilder vb;
    for (const PlacedRange& r : p)
      for (auto [b, e] : chunks(r.begin, r.end, target_.tile.workerContexts, kGrain))
        vb.add("ScaledAdd", r.tile, {{"data", {w, b, e}}, {"deltas", grad.ref(b, e)}}, {{"scale", op.scale}});
    execute(vb);
  }

  const OpGraph& g_;
  const model::Target& target_;
  std::uint32_t tiles_;
  std::uint64_t budget_;
  std::vector<Id> valueTensor_;
  std::vector<Placement> valuePlacement_;
  LoweredStep out_;
  ir::DebugInfo debug_;
  std::vector<Id> opChildren_;
  std::uint32_t lossTile_ = 0;
};

}  // namespace

LoweredStep lowerStep(const OpGraph& g, const Schedule& schedule, const model::Target& target, std::uint32_t tiles,
                      std::uint64_t memoryBudget) {
  return Lowerer(g, target, tiles, memoryBudget).run(schedule);
}

}  // namespace ipusim::scheduler
