#pragma once
// What the convolution family shares (conv1d/2d, depthwise_conv1d/2d,
// separable_conv1d/2d, conv1d/2d_transpose; Keras's Conv1D ... Conv2DTranspose):
// its window keys, its output shape, Keras's fans for Glorot uniform, its
// size checks. A 1-D layer (steps x channels) is computed as a 2-D
// convolution over one row: its kernel size, stride and dilation are kept in
// [1] of LayerSpec::window, strides and dilation, with [0] = 1.
#include "scheduler/layers/layer.hpp"
#include "scheduler/models/keras_config.hpp"
#include "scheduler/models/workload_reader.hpp"

#include <cstdint>
#include <utility>

namespace ipusim::scheduler {

// 1 for the 1-D kinds, else 2.
int convRank(const std::string& kind);

// kernel_size (required), strides, dilation_rate (default 1) and padding
// ("valid" | "same", and "causal" when `causal`): a positive integer, or
// [rows, columns] (2-D) or [steps] (1-D). Keras's rule: strides > 1 and
// dilation_rate > 1 together are refused (naming dilation_rate).
void readConvWindow(const WorkloadReader& keys, LayerSpec& spec, int rank, bool causal);
// The same keys of a Keras config, and data_format (channels_last only).
void readConvWindow(KerasConfig& c, LayerSpec& spec, int rank, bool causal);
// A Keras config's positive integer `key` (filters, depth_multiplier, groups), `def` when absent.
std::uint32_t readPositive(KerasConfig& c, const char* key, std::int64_t def);

// The input as the image the convolution reads: [rows, columns, channels],
// or [1, steps, channels] for a 1-D layer. Fails (naming no key) on another rank.
Shape convImage(const LayerSpec& spec, const Shape& in, int rank, const LayerFail& fail);
// The output of a convolution with `channels` out over its input (Keras's
// conv_output_length per spatial dimension), in the layer's rank; fails on
// a window larger than a valid-padded input, naming kernel_size.
Shape convOutputShape(const LayerSpec& spec, const Shape& in, int rank, std::uint64_t channels, const LayerFail& fail);

// Keras's fans of a kernel shape (keras/src/initializers/random_initializers.py
// compute_fans): the receptive field is the product of all dimensions but
// the last two; fan_in = shape[-2] x receptive field, fan_out = shape[-1] x it.
std::pair<std::uint64_t, std::uint64_t> kernelFans(const Shape& kernel);

// The kernel (`kernelElements` float elements, named by `key`) and the
// float output against the one-tensor limit, at `batch` examples.
void checkConvLimits(const LayerSpec& l, std::uint64_t kernelElements, const char* key, std::uint32_t batch,
                     const LayerFail& fail);

}  // namespace ipusim::scheduler
