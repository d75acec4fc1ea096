#pragma once
// Lowering of one planned convolution (conv_plan.hpp) into programs of the
// current op: gather_operands (one Copy: every tile's input window — its
// rows plus the kernel's halo, all columns, its input channels — and its
// kernel block, or deltas block for a weight update, as 2-D regions into
// tile-local buffers), the AMP compute set (one ConvPartialnx1 or
// ConvWeightUpdatePartial per tile), then the partials placed into, or
// gathered and reduced into, the result's mapping (partials.hpp).
#include "scheduler/planning/conv_plan.hpp"
#include "scheduler/lowering/ir_builder.hpp"

namespace ipusim::scheduler {

struct ConvTensors {
  ir::Id in = ir::kNoId;       // [batch][inH][inW][inChans]
  ir::Id weights = ir::kNoId;  // the kernel ([kH][kW][inChans][outChans], or [kH][kW][outChans][inChans] when
                               // flipped); for a weight update the deltas [batch][outH][outW][outChans]
  ir::Id out = ir::kNoId;      // the result, already mapped
};

void lowerConv(IrBuilder& builder, const ConvShape& shape, const ConvPlan& plan, const ConvTensors& t,
               const std::string& name);

// `rows` x `cols` x `chans` images (NHWC, `height` rows of `width` columns
// of `chans` channels): images [b0, b0 + bLen), rows [r0, r0 + rLen), all
// columns, channels [c0, c0 + cLen) of `src`, packed into `dst` from `at`.
std::vector<ir::CopyRegion> nhwcWindow(ir::Id src, std::uint64_t height, std::uint64_t width, std::uint64_t chans,
                                       std::uint64_t b0, std::uint64_t bLen, std::uint64_t r0, std::uint64_t rLen,
                                       std::uint64_t c0, std::uint64_t cLen, ir::Id dst, std::uint64_t at);

}  // namespace ipusim::scheduler
