#include "scheduler/lowering/partials.hpp"

#include "model/codelets/per_worker.hpp"
#include "model/codelets/typed_codelet.hpp"
#include "scheduler/planning/cost_model.hpp"
#include "scheduler/lowering/copy_estimate.hpp"

#include <algorithm>
#include <tuple>

namespace ipusim::scheduler {
namespace {

const VertexCost& reduceSum(ir::DType out) {
  static const VertexCost toFloat("ReduceSum", {"rows", "cols", "axis", "scale", "accumulate"});
  static const VertexCost toHalf(model::typedCodeletName("ReduceSum", {ir::DType::Float, ir::DType::Half}),
                                 {"rows", "cols", "axis", "scale", "accumulate"});
  return out == ir::DType::Half ? toHalf : toFloat;
}

}  // namespace

PartialsCost estimatePartials(std::uint64_t outElements, std::uint64_t outTiles, std::uint64_t blockElements,
                              std::uint64_t reductionBlocks, ir::DType outType, const model::Target& target) {
  PartialsCost c;
  const std::uint64_t owned = ceilDiv(outElements, std::max<std::uint64_t>(1, outTiles));
  const std::uint64_t eOut = ir::sizeOf(outType), ePartial = 4;
  if (reductionBlocks == 1) {
    c.exchange = exchangePhaseCycles(std::max(owned * eOut, blockElements * eOut), target);
    return c;
  }
  const std::uint64_t partialBytes = blockElements * ePartial;
  c.exchange = exchangePhaseCycles(std::max(owned * reductionBlocks * ePartial, partialBytes), target);
  // The owner's elements as one matrix, its columns shared between the
  // workers (placeOrReducePartials' per-worker vertex).
  const std::uint64_t chunk = std::max<std::uint64_t>(1, ceilDiv(owned, std::max(1u, target.tile.workerContexts)));
  const ir::Cycles one = reduceSum(outType)({reductionBlocks * chunk, chunk},
                                            {double(reductionBlocks), double(chunk), 0.0, 1.0, 0.0}, target);
  c.reduce = computePhaseCycles(tileCycles(std::vector<ir::Cycles>(ceilDiv(owned, chunk), one), {}, target), target);
  c.bytesPerTile = partialBytes + owned * reductionBlocks * ePartial;
  return c;
}

ir::CopyRegion stridedBlock(ir::Id src, std::uint64_t srcFirst, std::uint64_t rows, std::uint64_t len,
                            std::uint64_t srcStride, ir::Id dst, std::uint64_t dstFirst) {
  if (rows == 1 || len == srcStride)
    return {{src, srcFirst, srcFirst + rows * len}, {dst, dstFirst, dstFirst + rows * len}};
  return {{src, srcFirst, srcFirst + len}, {dst, dstFirst, dstFirst + len}, rows, srcStride, len};
}

void placeOrReducePartials(IrBuilder& builder, ir::Id partials, ir::Id out, ir::DType outType,
                           std::uint64_t reductionBlocks, const LocatePartial& locate, const std::string& name,
                           std::optional<ir::Cycles> exchangeEstimate) {
  // The output's owners take their elements: pieces contiguous both in the
  // output and in a partial block, cut into chunks for the workers.
  struct Chunk { std::uint64_t out, len, partial, stride; };
  const std::uint32_t workers = std::max<std::uint32_t>(1, builder.target().tile.workerContexts);
  auto forEachChunk = [&](auto&& visit) {
    for (const PlacedRange& r : builder.placementOf(out)) {
      const std::uint64_t owned = r.end - r.begin;
      const std::uint64_t chunkLength = std::max<std::uint64_t>(1, ceilDiv(owned, workers));
      for (std::uint64_t e = r.begin; e < r.end;) {
        const PartialLocation at = locate(e);
        const std::uint64_t pieceEnd = std::min(r.end, at.pieceEnd);
        for (std::uint64_t c = e; c < pieceEnd; c += chunkLength)
          visit(Chunk{c, std::min(chunkLength, pieceEnd - c), at.partial + (c - e), at.stride});
        e = pieceEnd;
      }
    }
  };
  if (reductionBlocks == 1) {
    // Chunks of one length at a constant stride in both tensors (a channel
    // block of consecutive positions) extend one 2-D region.
    std::vector<ir::CopyRegion> place;
    forEachChunk([&](const Chunk& c) {
      if (!place.empty()) {
        ir::CopyRegion& last = place.back();
        const std::uint64_t len = last.src.size();
        if (len == c.len && c.out > last.dst.begin && c.partial > last.src.begin) {
          const std::uint64_t outStride = c.out - last.dst.begin, partialStride = c.partial - last.src.begin;
          if (last.rows == 1 && outStride >= len && partialStride >= len) {
            last.rows = 2, last.srcStride = partialStride, last.dstStride = outStride;
            return;
          }
          if (last.rows > 1 && c.out == last.dst.begin + last.rows * last.dstStride &&
              c.partial == last.src.begin + last.rows * last.srcStride) {
            ++last.rows;
            return;
          }
        }
      }
      place.push_back({{partials, c.partial, c.partial + c.len}, {out, c.out, c.out + c.len}});
    });
    const ir::Cycles estimate = exchangeEstimate ? *exchangeEstimate : estimateCopy(builder, place);
    builder.copy(std::move(place), "place_output", estimate);
    return;
  }
  // Each owner range gathers its elements' partials as a reductionBlocks x
  // owned matrix (block k's elements in row k: the exchange lays them out)
  // and sums its columns with one vertex standing for the worker vertices
  // that share them (model/codelets/per_worker.hpp).
  const Placement& ranges = builder.placementOf(out);
  std::vector<std::uint32_t> owners;
  std::vector<std::uint64_t> sizes;
  for (const PlacedRange& r : ranges) {
    if (owners.empty() || owners.back() != r.tile) owners.push_back(r.tile), sizes.push_back(0);
    sizes.back() += reductionBlocks * (r.end - r.begin);
  }
  ir::Id gathered;
  std::vector<std::uint64_t> gAt;
  std::tie(gathered, gAt) = builder.addBlocks(name + "/partials_gathered", ir::DType::Float, owners, sizes);
  std::vector<std::uint64_t> matrixAt(ranges.size());  // range i's matrix in `gathered`
  for (std::size_t i = 0, owner = 0; i < ranges.size(); ++i) {
    const bool sameOwner = i > 0 && ranges[i].tile == ranges[i - 1].tile;  // its block continues
    if (i > 0 && !sameOwner) ++owner;
    matrixAt[i] = sameOwner ? matrixAt[i - 1] + reductionBlocks * (ranges[i - 1].end - ranges[i - 1].begin) : gAt[owner];
  }
  std::vector<ir::CopyRegion> bring;
  std::size_t range = 0;
  forEachChunk([&](const Chunk& ch) {
    while (ch.out >= ranges[range].end) ++range;
    const std::uint64_t cols = ranges[range].end - ranges[range].begin, col = ch.out - ranges[range].begin;
    bring.push_back({{partials, ch.partial, ch.partial + ch.len},
                     {gathered, matrixAt[range] + col, matrixAt[range] + col + ch.len}, reductionBlocks, ch.stride,
                     cols});
  });
  const std::string reduceSum =
      model::perWorkerName(model::typedCodeletName("ReduceSum", {ir::DType::Float, outType}));
  std::vector<ir::Vertex> reduce;
  reduce.reserve(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const PlacedRange& r = ranges[i];
    const std::uint64_t cols = r.end - r.begin;
    reduce.push_back({reduceSum, r.tile,
                      {{"in", {gathered, matrixAt[i], matrixAt[i] + reductionBlocks * cols}}, {"out", {out, r.begin, r.end}}},
                      {{"rows", double(reductionBlocks)}, {"cols", double(cols)}, {"axis", 0}, {"scale", 1},
                       {"accumulate", 0}}});
  }
  const ir::Cycles estimate = exchangeEstimate ? *exchangeEstimate : estimateCopy(builder, bring);
  builder.copy(std::move(bring), "gather_partials", estimate);
  builder.execute(std::move(reduce), "reduce");
}

}  // namespace ipusim::scheduler
