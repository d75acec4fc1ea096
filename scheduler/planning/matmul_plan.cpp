#include "scheduler/planning/matmul_plan.hpp"

#include "model/codelets/codelet.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "scheduler/planning/cost_model.hpp"
#include "scheduler/lowering/partials.hpp"
#include "scheduler/planning/plan_cache.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace ipusim::scheduler {
namespace {

// The AMP codelet, typed as the lowering will type it.
const VertexCost& matMulPartial(ir::DType input, ir::DType partials) {
  static std::mutex mutex;
  static std::map<std::pair<ir::DType, ir::DType>, std::unique_ptr<VertexCost>> costs;
  std::lock_guard<std::mutex> lock(mutex);
  auto& c = costs[{input, partials}];
  if (!c)
    c = std::make_unique<VertexCost>(model::typedCodeletName("MatMulPartial", {input, partials}),
                                     std::vector<std::string>{"m", "k", "n", "transposeA", "transposeB", "accumulate"});
  return *c;
}
// Beyond this many passes a product is better declared out of memory.
constexpr std::uint64_t kMaxSerialPasses = 64;

}  // namespace

bool MatMulShape::operator==(const MatMulShape& o) const {
  return std::tie(m, k, n, transposeA, transposeB, inputType, outputType, aTiles, bTiles, outTiles, groups) ==
         std::tie(o.m, o.k, o.n, o.transposeA, o.transposeB, o.inputType, o.outputType, o.aTiles, o.bTiles, o.outTiles,
                  o.groups);
}

std::vector<std::uint64_t> blockCounts(std::uint64_t d, std::uint64_t limit) {
  std::vector<std::uint64_t> counts;
  std::uint64_t lastBlock = 0;
  for (std::uint64_t p = 1; p <= d && p <= limit; ++p) {
    const std::uint64_t block = ceilDiv(d, p);
    // The fewest blocks giving this block size (later p with the same block
    // size only leave tiles idle).
    if (block != lastBlock && ceilDiv(d, block) == p) counts.push_back(p);
    lastBlock = block;
  }
  return counts;
}

MatMulCost estimateMatMul(const MatMulShape& full, std::uint64_t pm, std::uint64_t pk, std::uint64_t pn,
                          const model::Target& target, std::uint64_t serial, std::uint64_t pg) {
  if (serial > 1 && full.groups > 1) throw std::logic_error("estimateMatMul: serial passes of a grouped product");
  if (serial > 1) {
    // One pass: ceil(m / serial) rows into a temporary spread like the
    // output, then placed into the output's rows (each owner receives its share).
    MatMulShape pass = full;
    pass.m = ceilDiv(full.m, serial);
    pass.outTiles = std::min<std::uint64_t>(full.outTiles, ceilDiv(pass.m * pass.n, 32));
    MatMulCost c = estimateMatMul(pass, pm, pk, pn, target, 1);
    const std::uint64_t owned = ceilDiv(full.m * full.n, std::max<std::uint64_t>(1, full.outTiles));
    const std::uint64_t passOwned = ceilDiv(pass.m * pass.n, std::max<std::uint64_t>(1, pass.outTiles));
    c.reduceExchange += exchangePhaseCycles(std::max(owned, passOwned) * ir::sizeOf(full.outputType), target);
    c.temporaryBytesPerTile += passOwned * ir::sizeOf(full.outputType);
    c.gather *= serial, c.compute *= serial, c.reduceExchange *= serial, c.reduce *= serial;
    return c;
  }
  const MatMulShape& s = full;
  MatMulCost c;
  const std::uint64_t mb = ceilDiv(s.m, pm), kb = ceilDiv(s.k, pk), nb = ceilDiv(s.n, pn);
  const std::uint64_t gb = ceilDiv(s.groups, pg);  // groups on the busiest tile
  const std::uint64_t eIn = ir::sizeOf(s.inputType), eOut = ir::sizeOf(s.outputType);
  // 1. Gather: the busiest receiver (its two blocks per group) or sender (its
  // share of a, read by pn tiles, and of b, read by pm tiles: sent once with
  // multicast, once per reader without).
  const bool multicast = target.exchange.multicast != 0;
  const std::uint64_t received = gb * (mb * kb + kb * nb) * eIn;
  const std::uint64_t sent =
      ceilDiv(s.groups * s.m * s.k, std::max<std::uint64_t>(1, s.aTiles)) * eIn * (multicast ? 1 : pn) +
      ceilDiv(s.groups * s.k * s.n, std::max<std::uint64_t>(1, s.bTiles)) * eIn * (multicast ? 1 : pm);
  c.gather = exchangePhaseCycles(std::max(received, sent), target);
  // 2. One AMP vertex per tile and group (a supervisor's each: they run in turn).
  const ir::DType partialsType = pk > 1 ? ir::DType::Float : s.outputType;
  const ir::Cycles amp = matMulPartial(s.inputType, partialsType)({mb * kb, kb * nb, mb * nb},
                                         {double(mb), double(kb), double(nb), double(s.transposeA),
                                          double(s.transposeB), 0.0}, target);
  c.compute = computePhaseCycles(tileCycles({}, std::vector<ir::Cycles>(gb, amp), target), target);
  // 3. Partials to the output's owners (reduced there when pk > 1).
  const std::uint64_t partialBytes = gb * mb * nb * (pk > 1 ? 4 : eOut);
  const PartialsCost r = estimatePartials(s.groups * s.m * s.n, s.outTiles, gb * mb * nb, pk, s.outputType, target);
  c.reduceExchange = r.exchange;
  c.reduce = r.reduce;
  const std::uint64_t bytes = std::max(gb * (mb * kb + kb * nb) * eIn + partialBytes, r.bytesPerTile);
  c.temporaryBytesPerTile = bytes;
  return c;
}

std::vector<MatMulPlan> matMulPlanSpace(const MatMulShape& s, const model::Target& target, std::uint32_t tiles,
                                        std::uint64_t budget, std::uint64_t serial) {
  std::vector<MatMulPlan> space;
  for (std::uint64_t pg : blockCounts(s.groups, tiles))
    for (std::uint64_t pm : blockCounts(ceilDiv(s.m, serial), tiles / pg))
      for (std::uint64_t pn : blockCounts(s.n, tiles / (pg * pm)))
        for (std::uint64_t pk : blockCounts(s.k, tiles / (pg * pm * pn))) {
          MatMulPlan plan{pm, pk, pn, pg, serial, estimateMatMul(s, pm, pk, pn, target, serial, pg)};
          plan.fits = plan.cost.temporaryBytesPerTile <= budget;
          space.push_back(plan);
        }
  return space;
}

static MatMulPlan searchMatMul(const MatMulShape& s, const model::Target& target, std::uint32_t tiles,
                               std::uint64_t budget);

MatMulPlan planMatMul(const MatMulShape& s, const model::Target& target, std::uint32_t tiles, std::uint64_t budget) {
  static PlanCache<MatMulShape, MatMulPlan> cache;
  return cache.get(s, target, tiles, budget, [&] { return searchMatMul(s, target, tiles, budget); });
}

// The fastest plan that fits in the fewest serial passes.
static MatMulPlan searchMatMul(const MatMulShape& s, const model::Target& target, std::uint32_t tiles,
                               std::uint64_t budget) {
  auto better = [](const MatMulPlan& a, const MatMulPlan& b) {
    if (a.fits != b.fits) return a.fits;
    if (!a.fits) return a.cost.temporaryBytesPerTile < b.cost.temporaryBytesPerTile;
    return a.cost.total() != b.cost.total() ? a.cost.total() < b.cost.total() : a.tiles() < b.tiles();
  };
  MatMulPlan best;
  bool have = false;
  // The fewest serial passes that fit (more passes only add time).
  for (std::uint64_t serial : blockCounts(s.m, s.groups > 1 ? 1 : kMaxSerialPasses)) {
    for (const MatMulPlan& p : matMulPlanSpace(s, target, tiles, budget, serial))
      if (!have || better(p, best)) best = p, have = true;
    if (best.fits) break;
  }
  return best;
}

}  // namespace ipusim::scheduler
