#pragma once
// Gaussian noise, one function of (seed, step, element index), as the
// dropout mask is (dropout_mask.hpp): the device's GaussianNoise vertices and
// any CPU reference draw the same standard normal values, the backward pass
// of a multiplicative noise the forward pass's. Box-Muller over two of the
// mask's uniform draws. (Keras's own draws come from its backend's generator
// and cannot be reproduced outside it; the distributions and scalings are
// Keras's.)
#include "model/numeric/dropout_mask.hpp"

#include <cmath>
#include <cstdint>

namespace ipusim::numeric {

// A standard normal draw for element `index` at `step`.
inline float standardNormal(std::uint64_t seed, std::uint64_t step, std::uint64_t index) {
  // u1 in (0, 1] so its logarithm is finite.
  const double u1 = 1.0 - double(dropoutUniform(seed, step, 2 * index));
  const double u2 = double(dropoutUniform(seed, step, 2 * index + 1));
  return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

}  // namespace ipusim::numeric
