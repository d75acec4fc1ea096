#include "scheduler/matmul_plan.hpp"

#include "model/codelets/codelet.hpp"
#include "model/hardware/tile.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace ipusim::scheduler {
namespace {

std::vector<std::uint64_t> splitCandidates(std::uint64_t d, std::uint64_t limit) {
  std::vector<std::uint64_t> c;
  for (std::uint64_t p = 1; p <= d && p <= limit; p *= 2) c.push_back(p);
  if (d <= limit && (c.empty() || c.back() != d)) c.push_back(d);
  // splits that make blocks of whole multiples of 8 rows / columns
  for (std::uint64_t b : {7ull, 49ull, 98ull, 196ull}) if (b < d && d % b == 0 && b <= limit) c.push_back(b);
  return c;
}

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

ir::Cycles codeletCycles(const std::string& name, const std::vector<std::uint64_t>& sizes,
                         const std::map<std::string, double>& params, const model::Target& target) {
  const auto& codelet = model::CodeletRegistry::instance().get(name);
  return codelet.cycles({sizes, model::orderedParams(codelet, params)}, target);
}

// Blocks of mb x nb outputs, k whole, one per tile: one multi-region Copy
// gathers each tile's op(a) rows (mb x k) and op(b) columns (k x nb) into
// contiguous buffers, received at exchange.bytesPerCycle (one phase); one
// MatMulPartial per tile; a block that is not contiguous in the output
// (several rows of part of the columns) is written to a tile-local buffer
// and copied into place row by row (one more exchange phase: the output is
// spread evenly over the same tiles, not by blocks).
MatMulPlan gatheredPlan(const MatMulShape& s, const model::Target& target, std::uint64_t pm, std::uint64_t pn,
                        std::uint64_t memoryBudget) {
  MatMulPlan plan{pm, pn, 1};
  plan.gathered = true;
  const std::uint64_t mb = ceilDiv(s.m, pm), nb = ceilDiv(s.n, pn);
  const ir::Cycles vertexCycles =
      codeletCycles("MatMulPartial", {mb * s.k, s.k * nb, mb * nb},
                    {{"m", double(mb)}, {"k", double(s.k)}, {"n", double(nb)},
                     {"transposeA", s.transposeA}, {"transposeB", s.transposeB}, {"accumulate", 0}},
                    target);
  std::uint64_t cycles = model::hardware::tileComputeCycles({}, {vertexCycles}, target.tile);
  const std::uint64_t aBytes = mb * s.k * 4, bBytes = s.k * nb * 4, outBytes = mb * nb * 4;
  const std::uint64_t bpc = std::max<std::uint32_t>(1, target.exchange.bytesPerCycle);
  // One phase, bound by the busiest receiver (its two buffers) or sender
  // (an operand's bytes times the blocks reading them, over its source tiles).
  const std::uint64_t aSources = std::min(s.aSourceTiles ? s.aSourceTiles : pm, s.m * s.k);
  const std::uint64_t bSources = std::min(s.bSourceTiles ? s.bSourceTiles : pn, s.k * s.n);
  const std::uint64_t sent = ceilDiv(s.m * s.k * 4 * pn, std::max<std::uint64_t>(1, aSources)) +
                             ceilDiv(s.k * s.n * 4 * pm, std::max<std::uint64_t>(1, bSources));
  cycles += ceilDiv(std::max(aBytes + bBytes, sent), bpc) + target.exchange.latencyCycles + target.sync.internalCycles;
  std::uint64_t bytes = aBytes + bBytes + outBytes;
  if (!contiguous(0, mb, 0, nb, s.n)) {
    // The block buffer, copied into the output spread evenly over the same tiles.
    cycles += ceilDiv(outBytes, bpc) + target.exchange.latencyCycles + target.sync.internalCycles;
    bytes += outBytes;
  }
  plan.estimatedCycles = cycles;
  plan.bytesPerTile = bytes;
  plan.fits = bytes <= memoryBudget;
  return plan;
}

}  // namespace

MatMulPlan planMatMul(const MatMulShape& s, const model::Target& target, std::uint32_t tiles,
                      std::uint64_t memoryBudget) {
  MatMulPlan best;
  bool haveBest = false;
  auto better = [](const MatMulPlan& a, const MatMulPlan& b) {
    if (a.fits != b.fits) return a.fits;
    if (!a.fits) return a.bytesPerTile < b.bytesPerTile;
    return a.estimatedCycles < b.estimatedCycles || (a.estimatedCycles == b.estimatedCycles && a.tiles() < b.tiles());
  };
  auto consider = [&](const MatMulPlan& plan) {
    if (!haveBest || better(plan, best)) best = plan, haveBest = true;
  };
  const double bytesPerCycle = target.exchange.bytesPerCycle;
  for (std::uint64_t pm : splitCandidates(s.m, tiles))
    for (std::uint64_t pn : splitCandidates(s.n, tiles / pm))
      for (std::uint64_t pk : splitCandidates(s.k, tiles / (pm * pn))) {
        // The largest block (even splits: the first one).
        const std::uint64_t mb = ceilDiv(s.m, pm), nb = ceilDiv(s.n, pn), kb = ceilDiv(s.k, pk);
        // Vertex shape: whole block, or single rows and/or columns where a
        // whole block would not be one contiguous region of a field.
        for (int option = 0; option < 4; ++option) {
          const bool rows = option & 1, cols = option & 2;
          const std::uint64_t vm = rows ? 1 : mb, vn = cols ? 1 : nb;
          // Representative vertex at the block's end (the worst case for contiguity).
          const std::uint64_t r0 = s.m - vm, c0 = s.n - vn, k0 = s.k - kb;
          const bool aOk = s.transposeA ? contiguous(k0, s.k, r0, s.m, s.m) : contiguous(r0, s.m, k0, s.k, s.k);
          const bool bOk = s.transposeB ? contiguous(c0, s.n, k0, s.k, s.k) : contiguous(k0, s.k, c0, s.n, s.n);
          // The output region (or, with a k split, the reduction's output) must be contiguous.
          const bool outOk = contiguous(r0, s.m, c0, s.n, s.n);
          if (!(aOk && bOk && outOk)) continue;
          MatMulPlan plan{pm, pn, pk, rows, cols};
          const std::uint64_t vertices = (mb / vm) * (nb / vn);
          const ir::Cycles vertexCycles =
              codeletCycles("MatMulPartial", {vm * kb, kb * vn, vm * vn},
                            {{"m", double(vm)}, {"k", double(kb)}, {"n", double(vn)},
                             {"transposeA", s.transposeA}, {"transposeB", s.transposeB}, {"accumulate", 0}},
                            target);
          std::uint64_t cycles =
              model::hardware::tileComputeCycles({}, std::vector<ir::Cycles>(vertices, vertexCycles), target.tile);
          const std::uint64_t aBytes = mb * kb * 4, bBytes = kb * nb * 4, outBytes = mb * nb * 4;
          // Operand exchange: one Copy phase for a relaid operand, replicas by
          // doubling (log2 phases); each phase bound by a tile receiving its block.
          const std::uint64_t phaseOverhead = target.exchange.latencyCycles + target.sync.internalCycles;
          auto phases = [](std::uint64_t copies) {
            std::uint64_t p = copies ? 1 : 0;
            for (std::uint64_t done = 1; done < copies; done *= 2) ++p;
            return p;
          };
          cycles += phases(pn - (s.aResident ? 1 : 0)) * (std::uint64_t(aBytes / bytesPerCycle) + phaseOverhead);
          cycles += phases(pm - (s.bResident ? 1 : 0)) * (std::uint64_t(bBytes / bytesPerCycle) + phaseOverhead);
          std::uint64_t bytes = aBytes + bBytes + outBytes;
          if (pk > 1) {
            // As lowered: each vertex output region is reduced on one tile of
            // its block's pk tiles (round robin), from its pk partials.
            const std::uint64_t subs = vertices, reducers = std::min(pk, subs);
            const std::uint64_t subsPerReducer = ceilDiv(subs, reducers), subElements = vm * vn;
            const std::uint64_t gathered = subsPerReducer * pk * subElements * 4;
            cycles += std::uint64_t(gathered / bytesPerCycle) + phaseOverhead + target.sync.internalCycles;
            const ir::Cycles reduceCycles =
                codeletCycles("ReduceSum", {pk * subElements, subElements},
                              {{"rows", double(pk)}, {"cols", double(subElements)}, {"axis", 0}, {"scale", 1}, {"accumulate", 0}},
                              target);
            cycles += model::hardware::tileComputeCycles(std::vector<ir::Cycles>(subsPerReducer, reduceCycles), {}, target.tile);
            bytes += gathered + subsPerReducer * subElements * 4;
          }
          plan.estimatedCycles = cycles;
          plan.bytesPerTile = bytes;
          plan.fits = bytes <= memoryBudget;
          consider(plan);
        }
        if (pk == 1) consider(gatheredPlan(s, target, pm, pn, memoryBudget));
      }
  return best;  // pm = pn = pk = 1 with row vertices is always valid
}

}  // namespace ipusim::scheduler
