#pragma once
// Lowering of one planned matmul (matmul_plan.hpp) into programs of the
// current op: gather_operands (one Copy: every tile's a and b blocks, as
// 2-D regions, into tile-local buffers), the AMP compute set (one
// MatMulPartial per tile), then either place_output (pk = 1: one Copy of the
// blocks into the output's mapping) or gather_partials + reduce (pk > 1: one
// Copy bringing each owner's pk partials of its elements as a pk-row
// matrix, and ReduceSum over the owner's workers, one PerWorker vertex).
// A plan in serial passes repeats that per block of rows, each pass into a
// temporary then placed into the output's rows (place_rows).
#include "scheduler/lowering/ir_builder.hpp"
#include "scheduler/planning/matmul_plan.hpp"

namespace ipusim::scheduler {

struct MatMulTensors {
  ir::Id a = ir::kNoId;    // stored m x k (k x m when transposeA)
  ir::Id b = ir::kNoId;    // stored k x n (n x k when transposeB)
  ir::Id out = ir::kNoId;  // m x n, already mapped
};

void lowerMatMul(IrBuilder& builder, const MatMulShape& shape, const MatMulPlan& plan, const MatMulTensors& t,
                 const std::string& name);

}  // namespace ipusim::scheduler
