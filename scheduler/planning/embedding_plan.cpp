#include "scheduler/planning/embedding_plan.hpp"

#include "model/codelets/typed_codelet.hpp"
#include "scheduler/lowering/partials.hpp"
#include "scheduler/planning/cost_model.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace ipusim::scheduler {

std::string multiSliceCodelet(ir::DType valueType, ir::DType partialType) {
  if (valueType == partialType) return model::typedCodeletName("MultiSlice", {valueType});
  return model::typedCodeletName("MultiSlice", {valueType, partialType});
}

Placement EmbeddingPlan::tablePlacement() const {
  Placement p;
  for (std::uint64_t c = 0; c < columnBlocks; ++c)
    for (std::uint64_t r = 0; r < rowBlocks; ++r) {
      const std::uint64_t first = c * rows * grain;
      if (blockRowEnd(r) > blockRowBegin(r))
        p.push_back({first + blockRowBegin(r) * grain, first + blockRowEnd(r) * grain, tileOf(r, c)});
    }
  return p;
}

namespace {

// The plan's costs with `rowBlocks` row blocks (EmbeddingPlan's fields set).
void cost(EmbeddingPlan& p, ir::DType valueType, const model::Target& target) {
  static const std::vector<std::string> sliceParams{"n", "rows", "cols", "rowBegin", "totalRows"};
  static const std::vector<std::string> updateParams{"n", "rows", "cols", "rowBegin", "totalRows", "scale"};
  const bool half = valueType == ir::DType::Half;
  const ir::DType partialType = p.rowBlocks > 1 ? ir::DType::Float : valueType;
  const VertexCost slice(multiSliceCodelet(valueType, partialType), sliceParams);
  const VertexCost update(model::typedCodeletName("MultiUpdateAdd", {valueType}), updateParams);
  const VertexCost fill(model::typedCodeletName("Fill", {valueType}), {"value"});
  const VertexCost fillFloat("Fill", {"value"});
  const std::uint64_t blocksPerTile = ceilDiv(p.rowBlocks * p.columnBlocks, p.tiles);
  const std::uint64_t workers = std::max<std::uint32_t>(1, target.tile.workerContexts);
  const std::uint64_t n = p.lookups, bytes = half ? 2 : 4;
  const std::uint64_t partial = n * p.grain;  // one block's partial (its columns of every looked-up row)
  const std::uint64_t block = p.rowsPerBlock * p.grain;
  const double totalRows = double(p.rows);

  // Lookup: the ids to every tile; the slices, each block's ids over the workers; the partials placed or summed.
  ir::Cycles lookup = exchangePhaseCycles(n * 4, target);
  const std::uint64_t perWorker = ceilDiv(n, workers);
  const ir::Cycles one = slice({perWorker, block, perWorker * p.grain},
                               {double(perWorker), double(p.rowsPerBlock), double(p.grain), 0.0, totalRows}, target);
  lookup += computePhaseCycles(tileCycles(std::vector<ir::Cycles>(blocksPerTile * workers, one), {}, target), target);
  if (p.rowBlocks > 1) {
    const ir::Cycles zero = fillFloat({ceilDiv(partial, workers)}, {0.0}, target);
    lookup += computePhaseCycles(tileCycles(std::vector<ir::Cycles>(blocksPerTile * workers, zero), {}, target), target);
  }
  const PartialsCost place = estimatePartials(n * p.cols, std::min<std::uint64_t>(p.tiles, n * p.cols),
                                              blocksPerTile * partial, p.rowBlocks, valueType, target);
  lookup += place.exchange + place.reduce;

  // Update: the ids and each block's columns of the rows' gradient to its
  // tile; the gradient's block zeroed; the additions.
  ir::Cycles updateCycles = exchangePhaseCycles(n * 4 + blocksPerTile * partial * bytes, target);
  const ir::Cycles zero = fill({ceilDiv(block, workers)}, {0.0}, target);
  updateCycles += computePhaseCycles(tileCycles(std::vector<ir::Cycles>(blocksPerTile * workers, zero), {}, target), target);
  const ir::Cycles add = update({n, block, partial},
                                {double(n), double(p.rowsPerBlock), double(p.grain), 0.0, totalRows, 1.0}, target);
  updateCycles += computePhaseCycles(tileCycles({}, std::vector<ir::Cycles>(blocksPerTile, add), target), target);

  p.lookupCycles = lookup;
  p.updateCycles = updateCycles;
  // The table, its gradient and two optimizer slots (Adam's) per block, the
  // ids, a float partial and the gradient's columns.
  p.bytesPerTile = blocksPerTile * (4 * block * bytes + partial * 4 + partial * bytes) + n * 4 + place.bytesPerTile;
}

}  // namespace

EmbeddingPlan planEmbedding(std::uint64_t rows, std::uint64_t cols, std::uint64_t lookups, ir::DType valueType,
                            const model::Target& target, std::uint32_t tiles, std::uint64_t bytesPerTile) {
  EmbeddingPlan base;
  base.rows = rows, base.cols = cols, base.lookups = lookups;
  base.grain = embeddingColumnGrain(cols);
  base.columnBlocks = cols / base.grain;
  base.tiles = std::max<std::uint32_t>(1, tiles);
  const std::uint64_t maxRowBlocks = std::max<std::uint64_t>(1, std::min<std::uint64_t>(rows, base.tiles / base.columnBlocks));
  std::optional<EmbeddingPlan> best, smallest;
  for (std::uint64_t r = 1; r <= maxRowBlocks; ++r) {
    EmbeddingPlan p = base;
    p.rowBlocks = r;
    p.rowsPerBlock = ceilDiv(rows, r);
    if (r > 1 && ceilDiv(rows, p.rowsPerBlock) < r) continue;  // an empty block: the same as fewer blocks
    cost(p, valueType, target);
    if (!smallest || p.bytesPerTile < smallest->bytesPerTile) smallest = p;
    if (p.bytesPerTile <= bytesPerTile && (!best || p.lookupCycles + p.updateCycles < best->lookupCycles + best->updateCycles))
      best = p;
  }
  return best ? *best : *smallest;
}

}  // namespace ipusim::scheduler
