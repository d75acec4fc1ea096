#pragma once
// Lowering of a pooling op (forward or gradient) over NHWC activations.
// Partition: pb x pc blocks of whole images and channels, one per tile
// (pb = min(batch, tiles), then the channels split over the tiles left, in
// pairs so a block is whole 64-bit vectors): a block needs no halo, so its
// window is exactly its images' and channels' input (popnn's planner also
// splits the field; for the Keras shapes this compiler sees, batch x
// channels fills the IPU). Programs: gather_operands (one Copy), the pooling
// compute set (one vertex per tile), place_output (one Copy).
#include "scheduler/lowering/ir_builder.hpp"

#include <string>

namespace ipusim::scheduler {

enum class PoolCodelet { MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad };

struct PoolGeometry {
  std::uint64_t batch = 1, inH = 1, inW = 1, chans = 1, outH = 1, outW = 1;
  std::uint64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, padTop = 0, padLeft = 0;
  ir::DType dtype = ir::DType::Float;  // every tensor of the op
};

struct PoolTensors {
  ir::Id in = ir::kNoId;       // [batch][inH][inW][chans] (MaxPool, AvgPool, MaxPoolGrad)
  ir::Id gradOut = ir::kNoId;  // [batch][outH][outW][chans] (the gradients)
  ir::Id out = ir::kNoId;      // the forward output or the input gradient, already mapped
};

// Over the first `tiles` tiles of the builder's target.
void lowerPool(IrBuilder& builder, PoolCodelet codelet, const PoolGeometry& g, const PoolTensors& t,
               std::uint32_t tiles, const std::string& name);

}  // namespace ipusim::scheduler
