#pragma once
// Floating-point operations of a vertex and of a compute set, from the shapes
// alone (the vertex's parameters and field sizes), for the operations summary.
//
// Convention (documented in profiler/README.md):
// - MatMulPartial: 2 * m * k * n (one multiply and one add per MAC), the
//   count PopVision and PopLibs' planners use for a matrix product;
// - the convolution vertices (ConvPartialnx1, ConvPartialHorizontalMac,
//   ConvPartialVerticalMac, ConvWeightUpdatePartial,
//   ConvWeightUpdateHorizontalMac): 2 per multiply-accumulate, batch x outH
//   x outW x convGroups x outChans x kernelH x kernelW x inChans of the
//   vertex's geometry (padding products included), as `ipusim compile`
//   counts a convolution pass's MACs (a forward pass, an input gradient
//   and a weight update alike);
// - ScaledAdd (out += scale * in): 2 per element;
// - the element-wise and reduction codelets (Add, Sub, Mul, Div, Relu, Exp,
//   Log, Neg, Square, AddBias, ReluGrad, ReduceSum, ReduceMax): 1 per element
//   of the vertex's largest field;
// - SoftmaxCrossEntropy and its gradient: 4 per element of the largest field
//   (max, subtract-and-exp, sum, divide) — an estimate of the arithmetic, not
//   of the instructions;
// - data movement (Copy, Cast, Fill) and any other codelet: 0.
// Typed variants ("Relu<half>", "MatMulPartial<half,float>") count as their
// plain codelet.
#include "model/ir/compute_set.hpp"

#include <cstdint>

namespace ipusim::profiler {

std::uint64_t vertexFlops(const ir::Vertex& vertex);
std::uint64_t computeSetFlops(const ir::ComputeSet& computeSet);

}  // namespace ipusim::profiler
