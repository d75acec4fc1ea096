#include "scheduler/lowering/optimizer_lowering.hpp"

#include "model/codelets/typed_codelet.hpp"
#include "scheduler/lowering/copy_estimate.hpp"
#include "scheduler/lowering/reduction.hpp"
#include "scheduler/planning/tile_mapper.hpp"

#include <algorithm>
#include <functional>
#include <map>

namespace ipusim::scheduler {
namespace {

struct GradientChunk { ir::Id tensor; std::uint64_t begin, end; };

// Every input's ranges, per tile (in tile order), cut into one chunk per worker.
std::map<std::uint32_t, std::vector<GradientChunk>> chunksByTile(const IrBuilder& b, const std::vector<ir::Id>& ins) {
  std::map<std::uint32_t, std::vector<GradientChunk>> byTile;
  const std::uint32_t workers = std::max<std::uint32_t>(1, b.target().tile.workerContexts);
  for (ir::Id in : ins) {
    const std::uint64_t grain = vectorElements(b.tensor(in).dtype, b.target());
    for (const PlacedRange& r : b.placementOf(in))
      for (auto [begin, end] : chunks(r.begin, r.end, workers, grain)) byTile[r.tile].push_back({in, begin, end});
  }
  return byTile;
}

}  // namespace

namespace {

// Each tile's chunks reduced to one float each by `chunkVertex` (stage 1),
// folded per tile (stage 2), the tiles' sums gathered and folded into
// out[outIndex] (stage 3).
void reduceChunks(IrBuilder& b, const std::vector<ir::Id>& ins, ir::Id out, std::uint64_t outIndex,
                  const std::function<ir::Vertex(std::uint32_t, const GradientChunk&, ir::TensorRef)>& chunkVertex,
                  const std::string& stage1) {
  const auto byTile = chunksByTile(b, ins);
  std::vector<std::uint32_t> tiles;
  std::vector<std::uint64_t> sizes, ones;
  for (const auto& [tile, chunks] : byTile) {
    tiles.push_back(tile);
    sizes.push_back(chunks.size());
    ones.push_back(1);
  }
  const std::string name = b.tensor(out).name + (outIndex ? "/" + std::to_string(outIndex) : "");
  const auto [tileSums, sumAt] = b.addBlocks(name + "/tile_sums", ir::DType::Float, tiles, ones);
  const auto [partials, partialAt] = b.addBlocks(name + "/chunk_sums", ir::DType::Float, tiles, sizes);
  // Stage 1: each chunk's sum (into the tile's sum directly when it is the tile's only chunk).
  std::vector<ir::Vertex> reduce, folds;
  std::size_t k = 0;
  for (const auto& [tile, chunks] : byTile) {
    const bool one = chunks.size() == 1;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const ir::TensorRef into = one ? ir::TensorRef{tileSums, sumAt[k], sumAt[k] + 1}
                                     : ir::TensorRef{partials, partialAt[k] + c, partialAt[k] + c + 1};
      reduce.push_back(chunkVertex(tile, chunks[c], into));
    }
    // Stage 2: the tile's chunks folded.
    if (!one)
      folds.push_back({"ReduceSum", tile,
                       {{"in", {partials, partialAt[k], partialAt[k] + chunks.size()}}, {"out", {tileSums, sumAt[k], sumAt[k] + 1}}},
                       {{"rows", 1}, {"cols", double(chunks.size())}, {"axis", 1}}});
    ++k;
  }
  b.execute(std::move(reduce), stage1);
  if (!folds.empty()) b.execute(std::move(folds), "reduce_tile_chunks");
  // Stage 3: the tiles' sums, gathered where `out` lies.
  reduceAll(b, tileSums, tiles.size(), out, 1.0, outIndex);
}

}  // namespace

void sumOfSquares(IrBuilder& b, const std::vector<ir::Id>& ins, ir::Id out) {
  reduceChunks(
      b, ins, out, 0,
      [&b](std::uint32_t tile, const GradientChunk& ch, ir::TensorRef into) {
        return ir::Vertex{model::typedCodeletName("ReduceSquareAdd", {b.tensor(ch.tensor).dtype, ir::DType::Float}), tile,
                          {{"in", {ch.tensor, ch.begin, ch.end}}, {"out", into}}, {}};
      },
      "square_add");
}

void sumOfPenalties(IrBuilder& b, const std::vector<ir::Id>& ins, const std::vector<std::array<double, 2>>& coefficients,
                    ir::Id out, std::uint64_t outIndex) {
  std::map<ir::Id, std::array<double, 2>> factors;
  for (std::size_t i = 0; i < ins.size(); ++i) {
    // A value listed twice (two layers whose outputs are one tensor, each
    // with an activity regularizer) is reduced once, its factors added.
    auto [it, first] = factors.emplace(ins[i], coefficients.at(i));
    if (!first) it->second[0] += coefficients[i][0], it->second[1] += coefficients[i][1];
  }
  std::vector<ir::Id> unique;
  for (const auto& entry : factors) unique.push_back(entry.first);
  reduceChunks(
      b, unique, out, outIndex,
      [&b, &factors](std::uint32_t tile, const GradientChunk& ch, ir::TensorRef into) {
        const std::array<double, 2>& f = factors.at(ch.tensor);
        return ir::Vertex{model::typedCodeletName("ReducePenalty", {b.tensor(ch.tensor).dtype, ir::DType::Float}), tile,
                          {{"in", {ch.tensor, ch.begin, ch.end}}, {"out", into}}, {{"l1", f[0]}, {"l2", f[1]}}};
      },
      "penalty");
}

void clipByNorm(IrBuilder& b, const std::vector<ir::Id>& ins, ir::Id normSquared, const std::vector<ir::Id>& outs,
                double clipNorm, bool global) {
  const auto byTile = chunksByTile(b, ins);
  std::vector<std::uint32_t> tiles;
  for (const auto& entry : byTile) tiles.push_back(entry.first);
  const auto [copies, copyAt] = b.addBlocks(b.tensor(normSquared).name + "/copies", ir::DType::Float, tiles,
                                            std::vector<std::uint64_t>(tiles.size(), 1));
  std::vector<ir::CopyRegion> broadcast;
  for (std::size_t k = 0; k < tiles.size(); ++k) broadcast.push_back({{normSquared, 0, 1}, {copies, copyAt[k], copyAt[k] + 1}});
  const ir::Cycles estimate = estimateCopy(b, broadcast);
  b.copy(std::move(broadcast), "broadcast_norm", estimate);
  std::map<ir::Id, ir::Id> outOf;
  for (std::size_t i = 0; i < ins.size(); ++i) outOf[ins[i]] = outs[i];
  std::vector<ir::Vertex> v;
  std::size_t k = 0;
  for (const auto& [tile, chunks] : byTile) {
    for (const GradientChunk& ch : chunks)
      v.push_back({model::typedCodeletName("ClipByNorm", {b.tensor(ch.tensor).dtype}), tile,
                   {{"in", {ch.tensor, ch.begin, ch.end}}, {"normSquared", {copies, copyAt[k], copyAt[k] + 1}},
                    {"out", {outOf.at(ch.tensor), ch.begin, ch.end}}},
                   {{"clipNorm", clipNorm}, {"global", global ? 1.0 : 0.0}}});
    ++k;
  }
  b.execute(std::move(v), global ? "clip_by_global_norm" : "clip_by_norm");
}

}  // namespace ipusim::scheduler
