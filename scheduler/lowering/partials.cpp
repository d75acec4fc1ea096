#include "scheduler/lowering/partials.hpp"

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
                              std::uint64_t reductionBlocks, std::uint64_t pieceLength, ir::DType outType,
                              const model::Target& target) {
  PartialsCost c;
  const std::uint64_t owned = ceilDiv(outElements, std::max<std::uint64_t>(1, outTiles));
  const std::uint64_t eOut = ir::sizeOf(outType), ePartial = 4;
  if (reductionBlocks == 1) {
    c.exchange = exchangePhaseCycles(std::max(owned * eOut, blockElements * eOut), target);
    return c;
  }
  const std::uint64_t partialBytes = blockElements * ePartial;
  c.exchange = exchangePhaseCycles(std::max(owned * reductionBlocks * ePartial, partialBytes), target);
  // The owner's elements in pieces contiguous in the output and in a
  // partial block, cut into chunks so that every worker has one.
  const std::uint64_t pieces = ceilDiv(owned, pieceLength) + 1;
  const std::uint64_t chunks = std::max<std::uint64_t>(pieces, target.tile.workerContexts);
  const std::uint64_t chunk = ceilDiv(owned, chunks);
  const ir::Cycles one = reduceSum(outType)({reductionBlocks * chunk, chunk},
                                            {double(reductionBlocks), double(chunk), 0.0, 1.0, 0.0}, target);
  c.reduce = computePhaseCycles(tileCycles(std::vector<ir::Cycles>(std::min(chunks, owned), one), {}, target), target);
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
  struct Chunk { std::uint32_t owner; std::uint64_t out, len, partial, stride; };
  const std::uint32_t workers = std::max<std::uint32_t>(1, builder.target().tile.workerContexts);
  auto forEachChunk = [&](auto&& visit) {
    for (const PlacedRange& r : builder.placementOf(out)) {
      const std::uint64_t owned = r.end - r.begin;
      const std::uint64_t chunkLength = std::max<std::uint64_t>(1, ceilDiv(owned, workers));
      for (std::uint64_t e = r.begin; e < r.end;) {
        const PartialLocation at = locate(e);
        const std::uint64_t pieceEnd = std::min(r.end, at.pieceEnd);
        for (std::uint64_t c = e; c < pieceEnd; c += chunkLength)
          visit(Chunk{r.tile, c, std::min(chunkLength, pieceEnd - c), at.partial + (c - e), at.stride});
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
  std::vector<Chunk> chunks;
  forEachChunk([&](const Chunk& c) { chunks.push_back(c); });
  std::vector<std::uint32_t> owners;
  std::vector<std::uint64_t> sizes;
  for (const Chunk& c : chunks) {
    if (owners.empty() || owners.back() != c.owner) owners.push_back(c.owner), sizes.push_back(0);
    sizes.back() += reductionBlocks * c.len;
  }
  ir::Id gathered;
  std::vector<std::uint64_t> gAt;
  std::tie(gathered, gAt) = builder.addBlocks(name + "/partials_gathered", ir::DType::Float, owners, sizes);
  std::vector<ir::CopyRegion> bring;
  std::vector<ir::Vertex> reduce;
  bring.reserve(chunks.size());
  reduce.reserve(chunks.size());
  std::size_t owner = 0;
  std::uint64_t at = gAt[0];
  for (const Chunk& ch : chunks) {
    if (ch.owner != owners[owner]) at = gAt[++owner];
    bring.push_back({{partials, ch.partial, ch.partial + ch.len}, {gathered, at, at + ch.len}, reductionBlocks, ch.stride, ch.len});
    reduce.push_back({model::typedCodeletName("ReduceSum", {ir::DType::Float, outType}), ch.owner,
                      {{"in", {gathered, at, at + reductionBlocks * ch.len}}, {"out", {out, ch.out, ch.out + ch.len}}},
                      {{"rows", double(reductionBlocks)}, {"cols", double(ch.len)}, {"axis", 0}, {"scale", 1}, {"accumulate", 0}}});
    at += reductionBlocks * ch.len;
  }
  const ir::Cycles estimate = exchangeEstimate ? *exchangeEstimate : estimateCopy(builder, bring);
  builder.copy(std::move(bring), "gather_partials", estimate);
  builder.execute(std::move(reduce), "reduce");
}

}  // namespace ipusim::scheduler
