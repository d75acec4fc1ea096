#pragma once
// The embedding's programs by its plan (planning/embedding_plan.hpp):
//   lookup: the ids copied to every block's tile (one Copy); with several
//     row blocks the float partials zeroed (Fill); one MultiSlice per worker
//     and block over its share of the ids; the partials placed into the
//     output, or gathered and summed (partials.hpp).
//   update: the ids and each block's columns of the rows' gradient copied to
//     its tile (one Copy); the gradient's block zeroed (Fill); one
//     MultiUpdateAdd (a supervisor vertex) per block.
#include "scheduler/lowering/ir_builder.hpp"
#include "scheduler/planning/embedding_plan.hpp"

#include <string>

namespace ipusim::scheduler {

// `ids`: `plan.lookups` ints; `table`: [columnBlocks, rows, grain] of
// `valueType`, placed by plan.tablePlacement(); `out`: [lookups, cols] of
// `valueType`, already mapped.
void lowerEmbeddingLookup(IrBuilder& builder, const EmbeddingPlan& plan, ir::Id ids, ir::Id table, ir::Id out,
                          ir::DType valueType, const std::string& name);
// `rowsGrad`: [lookups, cols] of `valueType`; `tableGrad`: as the table, placed so.
void lowerEmbeddingUpdate(IrBuilder& builder, const EmbeddingPlan& plan, ir::Id ids, ir::Id rowsGrad,
                          ir::Id tableGrad, ir::DType valueType, const std::string& name);

}  // namespace ipusim::scheduler
