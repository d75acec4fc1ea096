#pragma once
// The convolution planner, in the style of the matmul planner (and of
// poplin's ConvPlan): a plan partitions one convolution over the tiles as
// pg x pb x ph x pci x pco blocks, one block per tile:
//   pg  conv groups (grouped and depthwise convolutions, poplin's
//   convGroupSplit), pb batch, ph output rows (the conv's own output rows;
//   for a weight update the deltas' rows), pci input channels and pco
//   output channels of each group,
// and chooses the vertex each tile runs, as poplin's planner chooses its
// method among the candidates of lib/poplin/ConvVertexType.cpp by their
// estimated cost:
//   AMP   ConvPartialnx1 / ConvWeightUpdatePartial: channels in whole AMP
//         groups (8 float or 16 half input channels, one conv unit's output
//         channels), conv groups one after another;
//   HMAC  ConvPartialHorizontalMac / ConvWeightUpdateHorizontalMac: dot
//         products on the workers' vector units, any channel count (poplin's
//         choice for float depthwise convolutions);
//   VMAC  ConvPartialVerticalMac (half activations, one output channel per
//         group; not for the weight update): 4 conv groups per vector, or 8
//         and 16 with half partials.
// The convolution is the one the vertex computes (ConvShape): the forward
// pass; the input gradient as the convolution of the output gradient,
// dilated by the stride, with the flipped kernel, channels swapped (as
// poplin transforms it); the weight update as a reduction over batch and
// positions (partials per (pb, ph) block, as poplin reduces a split of its
// weight-update conv's input channels).
// Its cost is a pure function of the plan, phase by phase, by the machine
// model's own rules (cost_model.hpp):
//   1. gather: each tile receives its input window (its rows plus the halo
//      its kernel rows reach, all columns, its groups' input channels) and
//      its weights block (for a weight update: its deltas block);
//   2. compute: one vertex per tile, partials in float when reduced;
//   3. partials (partials.hpp): placed into the output when the reduction is
//      not split; else gathered by the output's owners and reduced
//      (split input channels forward; split batch/rows for a weight update).
// A plan fits when its temporary bytes per tile are within the budget
// (ipu.available_memory_proportion x tile memory). A block's channels are
// contiguous in the tensors: a group's channels are split only when each
// block holds one group. Half activations: half windows and weights, float
// partials when reduced.
// planConv() keeps the fastest plan that fits (the smallest when none
// does); plans are cached by shape.
#include "model/ir/types.hpp"
#include "model/target.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::scheduler {

enum class ConvPass { Forward, InputGrad, WeightUpdate };
const char* toString(ConvPass pass);

struct ConvShape {
  ConvPass pass = ConvPass::Forward;
  // The convolution the vertex computes, in `groups` conv groups of inChans
  // input and outChans output channels: in [batch][inH][inW][groups x
  // inChans]; out [batch][outH][outW][groups x outChans] (WeightUpdate: the
  // deltas, and the result is [kernelH][kernelW][inChans][groups x outChans]).
  std::uint64_t batch = 1, inH = 1, inW = 1, inChans = 1, outH = 1, outW = 1, outChans = 1, groups = 1;
  std::uint64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  std::uint64_t kernelDilationH = 1, kernelDilationW = 1;  // Keras's dilation_rate
  std::int64_t padTop = 0, padLeft = 0;  // in dilated input coordinates
  bool flipped = false;  // the kernel stored [kH][kW][outChans][groups x inChans], read flipped
  ir::DType inputType = ir::DType::Float;   // the input and the kernel (or deltas)
  ir::DType outputType = ir::DType::Float;  // the result
  // Tiles the input, the second operand (kernel or deltas) and the result are spread over.
  std::uint64_t inTiles = 1, weightTiles = 1, outTiles = 1;
  bool operator==(const ConvShape& o) const;
  std::uint64_t resultElements() const;
  std::uint64_t weightElements() const;  // the second operand
};

struct ConvCost {
  ir::Cycles gather = 0, compute = 0, reduceExchange = 0, reduce = 0;
  std::uint64_t temporaryBytesPerTile = 0;
  ir::Cycles total() const { return gather + compute + reduceExchange + reduce; }
};

// The vertex a plan runs (see above).
enum class ConvMethod { Amp, HorizontalMac, VerticalMac };
const char* toString(ConvMethod method);

struct ConvPlan {
  std::uint64_t pb = 1, ph = 1, pci = 1, pco = 1, pg = 1;
  ConvMethod method = ConvMethod::Amp;
  std::uint64_t groupsPerVector = 1;  // VMAC: convGroupsPerGroup
  ConvCost cost;
  bool fits = true;
  std::uint64_t tiles() const { return pg * pb * ph * pci * pco; }
  // How many partials each result element has (the split reduction).
  std::uint64_t reductionBlocks(ConvPass pass) const { return pass == ConvPass::WeightUpdate ? pb * ph : pci; }
  // The vertices' partials: float when reduced (PopLibs' default), else the result's type.
  ir::DType partialsType(const ConvShape& s) const { return reductionBlocks(s.pass) > 1 ? ir::DType::Float : s.outputType; }
};

// One convolution of a compiled step and the plan it got.
struct PlannedConv {
  std::string op;  // "<layer>/<op>"
  ConvShape shape;
  ConvPlan plan;
};

// The input rows a block of output rows [y0, y0 + rows) reads: the first
// row, how many, and the padding before the first in that window's terms.
struct InputRows {
  std::uint64_t first = 0, count = 1;
  std::int64_t padTop = 0;
};
InputRows inputRowsOf(const ConvShape& s, std::uint64_t y0, std::uint64_t rows);

// A dimension of d elements in p blocks of ceil(d / p).
struct BlockSplit {
  std::uint64_t d, size;
  std::uint64_t begin(std::uint64_t i) const { return i * size; }
  std::uint64_t length(std::uint64_t i) const { return std::min(d, (i + 1) * size) - std::min(d, i * size); }
};

// The cost of partition `p` (its pg, pb, ph, pci, pco, method and groupsPerVector).
ConvCost estimateConv(const ConvShape& s, const ConvPlan& p, const model::Target& target);
// Every partition the planner considers, costed, `fits` against `budget`.
std::vector<ConvPlan> convPlanSpace(const ConvShape& s, const model::Target& target, std::uint32_t tiles,
                                    std::uint64_t budget);
ConvPlan planConv(const ConvShape& s, const model::Target& target, std::uint32_t tiles, std::uint64_t budget);

// The vertex of a block (exactly as the lowering builds it): its codelet,
// field sizes and params in declaration order, for cost and lowering alike.
struct ConvVertexShape {
  std::string codelet;
  std::vector<std::uint64_t> fieldSizes;
  std::vector<std::pair<std::string, double>> params;
};
// A block of `groups` conv groups of `inChans` input and `outChans` output
// channels each, `batch` images, `outRows` rows, reading input rows `window`.
ConvVertexShape convVertexShape(const ConvShape& s, const ConvPlan& plan, std::uint64_t batch, std::uint64_t outRows,
                                std::uint64_t groups, std::uint64_t inChans, std::uint64_t outChans,
                                const InputRows& window, ir::DType partialsType);

}  // namespace ipusim::scheduler
