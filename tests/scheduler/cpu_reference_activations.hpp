#pragma once
// The CPU reference's activations and activation-like layers, written from
// Keras's definitions (keras/src/activations/activations.py, the layers'
// call()) as straight loops in double, independently of the device's
// codelets: every derivative here is taken from the forward input.
#include "scheduler/models/layer_spec.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::testing {

// f(x) and f'(x) of an activation with its constants (not linear, not softmax).
double activationValue(scheduler::Activation a, const scheduler::ActivationParams& p, double x);
double activationSlope(scheduler::Activation a, const scheduler::ActivationParams& p, double x);

// Softmax of `rows` blocks of n x inner values along the n positions of each
// block; its gradient from the output y: y (g - sum_n(g y)).
std::vector<float> softmaxForward(const std::vector<float>& x, std::uint64_t n, std::uint64_t inner);
std::vector<float> softmaxBackward(const std::vector<float>& y, const std::vector<float>& g, std::uint64_t n,
                                   std::uint64_t inner);

// A layer's broadcast constant (Rescaling's scale, Normalization's mean) at
// every element of one example of per-example shape `in`, its dims laid on
// the input's axes `axisOfDim` (0-based, one per dim of c).
std::vector<double> constantPerElement(const scheduler::BroadcastConstant& c, const std::vector<std::size_t>& axisOfDim,
                                       const std::vector<std::uint64_t>& in);
// numpy's alignment (Rescaling) and Keras's Normalization alignment (the
// kept axes from the right) of c's dims.
std::vector<std::size_t> numpyAxes(const scheduler::BroadcastConstant& c, std::size_t rank);
std::vector<std::size_t> keptAxesFromTheRight(const scheduler::BroadcastConstant& c, const std::vector<std::int64_t>& kept);

}  // namespace ipusim::testing
