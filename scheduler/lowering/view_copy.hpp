#pragma once
// The Copy of a strided view (OpKind::CopyView): which runs of the source go
// where in the destination, as 2-D copy regions (model/ir/program.hpp
// CopyRegion). Poplar materialises a dimShuffled or broadcast view of a
// tensor by copying it; the exchange moves the bytes that change tiles and
// each tile copies the rest within itself (model/README.md, "Exchange"), by
// the machine's Copy rule. A permutation that moves the last axis copies
// single elements: the rule charges their bytes as any Copy's (an estimate:
// Poplar would transpose such blocks on the tiles with its Transpose
// vertices), and loading a Copy of millions of single elements takes the
// model seconds.
#include "model/ir/program.hpp"
#include "scheduler/graph/op_graph.hpp"

#include <vector>

namespace ipusim::scheduler {

// The regions copying `view` of tensor `src` (its dimensions' sizes and
// strides, in elements from element 0) into `dst` row-major. Dimensions of
// one element are dropped and neighbours that stay contiguous in both are
// merged; each region is a run contiguous in both tensors (the innermost
// dimension when its stride is 1, else one element), repeated along the
// largest remaining dimension (its rows and strides); one region per index
// of the dimensions left.
std::vector<ir::CopyRegion> viewCopyRegions(ir::Id src, ir::Id dst, const std::vector<ViewDim>& view);

}  // namespace ipusim::scheduler
