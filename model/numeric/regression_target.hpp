#pragma once
// The regression targets of an output that is not the one-hot label's width
// (scheduler::LossSpec::targetElements: an autoencoder's image, a
// segmentation's mask, one regressed value): each class's target is a fixed
// pattern of values in [0, 1), element `element` of class `label`'s pattern
// one function of the two, so the host streaming a batch's targets and any
// CPU reference computing the loss agree without sharing state. The datasets
// hold one label per example; these targets follow from it as one-hot
// targets do (a model can learn them from the label's evidence in the input).
#include <cstdint>

namespace ipusim::numeric {

// A uniform draw in [0, 1) with 24 bits (exact as a float), splitmix64 of (label, element).
inline float regressionTarget(std::int32_t label, std::uint64_t element) {
  std::uint64_t z = (std::uint64_t(std::uint32_t(label)) * 0xd1b54a32d192ed03ull) ^ (element * 0x9e3779b97f4a7c15ull) ^
                    0x5851f42d4c957f2dull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return float(z >> 40) * (1.0f / 16777216.0f);
}

}  // namespace ipusim::numeric
