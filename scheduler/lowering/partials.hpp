#pragma once
// The last phase of a partitioned product (a matmul or a convolution): every
// tile holds a block of partial results; the output's owners take their
// elements. With one block per output element the blocks are placed
// (one Copy); with r blocks of partial sums per element (a split reduction
// dimension) each owner gathers the r partials of its elements as an r-row
// matrix (one Copy) and sums its columns with ReduceSum worker vertices
// (one PerWorker vertex an owner: model/codelets/per_worker.hpp). Cost (for the
// planners) and lowering live side by side so they describe the same programs.
#include "model/ir/types.hpp"
#include "model/target.hpp"
#include "scheduler/lowering/ir_builder.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace ipusim::scheduler {

struct PartialsCost {
  ir::Cycles exchange = 0, reduce = 0;  // each with its latency or sync
  std::uint64_t bytesPerTile = 0;       // temporaries during the reduction (0 when placing)
};

// `outElements` spread over `outTiles` owners; the busiest tile's block has
// `blockElements` partials; `reductionBlocks` partials per output element.
PartialsCost estimatePartials(std::uint64_t outElements, std::uint64_t outTiles, std::uint64_t blockElements,
                              std::uint64_t reductionBlocks, ir::DType outType, const model::Target& target);

// Where output element `e` is found: `partial`, the element of the partials
// tensor in the first of its reduction blocks (the others follow at `stride`);
// output elements [e, pieceEnd) continue contiguously in that block.
struct PartialLocation {
  std::uint64_t partial, stride, pieceEnd;
};
using LocatePartial = std::function<PartialLocation(std::uint64_t e)>;

// Places (reductionBlocks == 1) or gathers and reduces the partials into
// `out` (already mapped), as programs "place_output" or "gather_partials" +
// "reduce" of the current op. Float partials when reduced. Without an
// `exchangeEstimate`, the exchange's cycles are estimated from the mappings
// (estimateCopy).
void placeOrReducePartials(IrBuilder& builder, ir::Id partials, ir::Id out, ir::DType outType,
                           std::uint64_t reductionBlocks, const LocatePartial& locate, const std::string& name,
                           std::optional<ir::Cycles> exchangeEstimate);

// `rows` rows of `len` elements, `srcStride` apart in src from srcFirst,
// packed in dst from dstFirst: one region (a 1-D one when contiguous).
ir::CopyRegion stridedBlock(ir::Id src, std::uint64_t srcFirst, std::uint64_t rows, std::uint64_t len,
                            std::uint64_t srcStride, ir::Id dst, std::uint64_t dstFirst);

}  // namespace ipusim::scheduler
