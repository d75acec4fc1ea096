#pragma once
// The CPU reference's layer normalization, from Keras's definition
// (keras/src/layers/normalization/layer_normalization.py: ops.moments over
// the normalized axes, out = (x - mean) / sqrt(variance + epsilon) gamma +
// beta) over rows of n values, in double with two-pass statistics,
// independently of the device's codelets; its gradient derived from that.
#include <cstdint>
#include <vector>

namespace ipusim::testing {

struct LayerNormGrads {
  std::vector<float> input, gamma, beta;
};

// gamma / beta empty: the layer has no scale / center.
std::vector<float> layerNormForward(const std::vector<float>& x, std::uint64_t n, double epsilon,
                                    const std::vector<float>& gamma, const std::vector<float>& beta);
LayerNormGrads layerNormBackward(const std::vector<float>& x, const std::vector<float>& grad, std::uint64_t n,
                                 double epsilon, const std::vector<float>& gamma);

// Group normalization (keras/src/layers/normalization/group_normalization.py)
// of examples of `positions` x `channels` values (channels last): each
// group of channels / groups channels normalized over every position, then
// gamma and beta per channel; the same with a layer norm over each group's
// gathered values.
std::vector<float> groupNormForward(const std::vector<float>& x, std::uint64_t positions, std::uint64_t channels,
                                    std::uint64_t groups, double epsilon, const std::vector<float>& gamma,
                                    const std::vector<float>& beta);
LayerNormGrads groupNormBackward(const std::vector<float>& x, const std::vector<float>& grad, std::uint64_t positions,
                                 std::uint64_t channels, std::uint64_t groups, double epsilon, const std::vector<float>& gamma);

}  // namespace ipusim::testing
