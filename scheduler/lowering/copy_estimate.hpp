#pragma once
// The compiler's estimate of a Copy's cycles, worked out from the tensors'
// mappings as the exchange fabric (sim/) times the Copy when it runs.
#include "scheduler/lowering/ir_builder.hpp"

namespace ipusim::scheduler {

// Cycles of a Copy of 1-D regions by the machine's rule: the busiest tile's
// bytes received from other tiles, or sent to them (with multicast,
// exchange.multicast, each distinct source element once however many tiles
// take it; without, once per receiver), as one exchange phase.
ir::Cycles estimateCopy(const IrBuilder& builder, const std::vector<ir::CopyRegion>& regions);

}  // namespace ipusim::scheduler
