#pragma once
// Plain loops for the CPU reference's convolution and pooling layers (NHWC
// activations, HWIO kernels, TF's padding arithmetic from scheduler/layers/window.hpp):
// forward and backward, float values with double accumulators. Pooling
// ignores padded positions (max) and does not count them (average), as TF
// and the device's pooling vertices do; a max window's gradient goes to its
// first maximum in row-major window order.
#include "scheduler/layers/window.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::testing {

struct SpatialGeometry {
  std::uint64_t batch = 0, inH = 0, inW = 0, inC = 0, outH = 0, outW = 0, outC = 0;
  scheduler::Window window;
  std::uint64_t padTop = 0, padLeft = 0;
  // The geometry of a window over a [batch, inH, inW, inC] input with `outC` output channels.
  static SpatialGeometry of(std::uint64_t batch, std::uint64_t inH, std::uint64_t inW, std::uint64_t inC,
                            std::uint64_t outC, const scheduler::Window& window);
};

// y = x (*) kernel [kH][kW][inC][outC] (+ bias [outC] when not empty).
std::vector<float> conv2dForward(const SpatialGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                 const std::vector<float>& bias);
struct Conv2DReferenceGrads {
  std::vector<float> kernel, bias, input;  // input empty unless asked for
};
Conv2DReferenceGrads conv2dBackward(const SpatialGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                    const std::vector<float>& gradOut, bool wantInput);

std::vector<float> pool2dForward(const SpatialGeometry& g, bool max, const std::vector<float>& x);
std::vector<float> pool2dBackward(const SpatialGeometry& g, bool max, const std::vector<float>& x,
                                  const std::vector<float>& gradOut);

}  // namespace ipusim::testing
