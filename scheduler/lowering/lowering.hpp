#pragma once
// Lowering: the scheduled op graph -> executable IR, op by op:
//   - every value gets a tensor mapped by the tile mapper (tile_mapper.hpp),
//     except a weight gradient, mapped as its weight (so the update is local),
//     and a loss's rows, kept whole;
//   - matmuls by their plan (matmul_plan.hpp, matmul_lowering.hpp);
//   - convolutions by theirs (conv_plan.hpp, conv_lowering.hpp), pooling
//     over blocks of images and channels (pool_lowering.hpp);
//   - column sums and the loss mean by staged reductions (reduction.hpp);
//   - elementwise ops where their first input lies, over every worker;
//   - a value wanted in another mapping is copied once (<value>/relaid).
// Every program carries the layer and op it came from; one Sequence per op.
#include "model/ir/executable.hpp"
#include "model/target.hpp"
#include "scheduler/lowering/ir_builder.hpp"
#include "scheduler/planning/conv_plan.hpp"
#include "scheduler/planning/matmul_plan.hpp"
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/graph/schedule.hpp"
#include "scheduler/models/workload_limits.hpp"

#include <map>
#include <string>

namespace ipusim::scheduler {

struct LoweredStep {
  ir::Executable exe;                  // tensors (unplaced addresses), compute sets, programs (no entry points yet)
  std::vector<ir::Id> opSequences;     // one Sequence per op, in schedule order
  ir::Id images = ir::kNoId, labels = ir::kNoId, loss = ir::kNoId;  // tensors
  ir::Id validationLoss = ir::kNoId;  // fit's validation pass's loss (OpGraph::validationLoss)
  std::vector<ir::Id> weightTensors;   // per OpGraph::modelWeights (a frozen layer's among them)
  // Per tensor: the first and last program step using it. Step 0 is the
  // step's input stream copies; `lastStep` + 1 its output stream copies.
  std::vector<UseSpan> useSpans;
  std::size_t lastStep = 0;
  std::uint64_t estimatedStepCycles = 0;  // compute + exchange + syncs of one step (no host transfers)
  std::uint64_t estimatedValidationStepCycles = 0;  // the same of a validation pass's step
  std::vector<PlannedMatMul> matMulPlans;  // in program order
  std::vector<PlannedConv> convPlans;      // in program order
  // The fused updates sharded over the replicas (OpGraph::optimizerStateShards):
  // per compute set, each vertex's chunk (collectives.hpp); replicate() keeps
  // on each replica the vertices of the chunk it owns.
  std::map<ir::Id, std::vector<std::uint32_t>> shardOfVertex;
};

// `graph` is consumed: the weights' initial values move into the executable.
// `tiles` are the tiles one op may use (one IPU's when sharded). Sharding:
// `tileBaseOfLayer` gives the first tile of each layer's IPU; an op of a
// layer not listed (the loss) stays where the op before it was. The step's
// vertices are held to `maxVertices` as each op is lowered
// (std::invalid_argument naming the layer and the op that passes it).
LoweredStep lowerStep(OpGraph& graph, const Schedule& schedule, const model::Target& target, std::uint32_t tiles,
                      std::uint64_t memoryBudget, const std::map<std::string, std::uint32_t>& tileBaseOfLayer = {},
                      std::uint64_t maxVertices = kMaxLaidOutVertices);

}  // namespace ipusim::scheduler
