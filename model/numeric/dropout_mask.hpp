#pragma once
// The dropout mask, one function of (seed, step, element index): the device's
// Dropout vertices and any CPU reference draw the same masks from the same
// seed. A counter-based draw (splitmix64 of the three), so an element's mask
// needs no state and the backward pass recomputes the forward pass's mask.
// (Keras's own masks come from its backend's generator and cannot be
// reproduced outside it; the rate and the 1/(1 - rate) scaling are Keras's.)
#include <cstdint>

namespace ipusim::numeric {

// A uniform draw in [0, 1) with 24 bits (exact as a float).
inline float dropoutUniform(std::uint64_t seed, std::uint64_t step, std::uint64_t index) {
  std::uint64_t z = seed ^ (step * 0xd1b54a32d192ed03ull) ^ (index * 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return float(z >> 40) * (1.0f / 16777216.0f);
}

// Element `index` is kept (scaled by 1 / (1 - rate)) when its draw is at least `rate`.
inline bool dropoutKeeps(std::uint64_t seed, std::uint64_t step, std::uint64_t index, float rate) {
  return dropoutUniform(seed, step, index) >= rate;
}

}  // namespace ipusim::numeric
